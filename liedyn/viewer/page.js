// liedyn viewer page: WebGL 2, no external resources. The scene is the JSON
// in <script id="liedyn-data">; arrays are base64 little-endian.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("liedyn-data").textContent);
  const status = document.getElementById("status");
  function fail(msg) { status.textContent = msg; status.className = "error"; document.body.dataset.state = "error"; }
  function b64(s, Type) {
    const bin = atob(s), u8 = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
    return new Type(u8.buffer);
  }
  const canvas = document.getElementById("view");
  const gl = canvas.getContext("webgl2", { antialias: true, preserveDrawingBuffer: true });
  if (!gl) { fail("This page needs WebGL 2, which this browser does not provide."); return; }

  // ---------------------------------------------------------------- shaders
  const VS = `#version 300 es
  in vec3 pos; uniform mat4 P, V, M; out vec3 vp;
  void main() { vec4 w = V * M * vec4(pos, 1.0); vp = w.xyz; gl_Position = P * w; }`;
  const FS = `#version 300 es
  precision highp float; in vec3 vp; uniform vec4 color; uniform int lit; out vec4 o;
  void main() {
    if (lit == 0) { o = color; return; }
    vec3 n = normalize(cross(dFdx(vp), dFdy(vp)));
    if (n.z < 0.0) n = -n;                       // two-sided: face the camera
    float l = 0.38 + 0.5 * max(dot(n, normalize(vec3(0.35, 0.55, 1.0))), 0.0)
              + 0.17 * max(n.y, 0.0);
    o = vec4(color.rgb * l, color.a);
  }`;
  function shader(type, src) {
    const s = gl.createShader(type); gl.shaderSource(s, src); gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
    return s;
  }
  const prog = gl.createProgram();
  gl.attachShader(prog, shader(gl.VERTEX_SHADER, VS));
  gl.attachShader(prog, shader(gl.FRAGMENT_SHADER, FS));
  gl.linkProgram(prog);
  gl.useProgram(prog);
  const U = {}; for (const u of ["P", "V", "M", "color", "lit"]) U[u] = gl.getUniformLocation(prog, u);
  const aPos = gl.getAttribLocation(prog, "pos");

  // ------------------------------------------------------------ 4x4 matrices (column-major)
  const I4 = () => new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
  function mul(a, b) {
    const o = new Float32Array(16);
    for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
      let s = 0; for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k]; o[c * 4 + r] = s;
    }
    return o;
  }
  function fromRows(x, off) {      // 3x4 row-major at x[off..off+12) -> 4x4 column-major
    const m = I4();
    for (let r = 0; r < 3; r++) for (let c = 0; c < 4; c++) m[c * 4 + r] = x[off + r * 4 + c];
    return m;
  }
  function perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2), m = new Float32Array(16);
    m[0] = f / aspect; m[5] = f; m[10] = (far + near) / (near - far); m[11] = -1;
    m[14] = 2 * far * near / (near - far); return m;
  }
  function lookAt(e, t, up) {
    let z = [e[0] - t[0], e[1] - t[1], e[2] - t[2]]; const zl = Math.hypot(...z); z = z.map(v => v / zl);
    let x = [up[1] * z[2] - up[2] * z[1], up[2] * z[0] - up[0] * z[2], up[0] * z[1] - up[1] * z[0]];
    const xl = Math.hypot(...x) || 1; x = x.map(v => v / xl);
    const y = [z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]];
    const m = I4();
    for (let i = 0; i < 3; i++) { m[i * 4] = x[i]; m[i * 4 + 1] = y[i]; m[i * 4 + 2] = z[i]; }
    m[12] = -(x[0] * e[0] + x[1] * e[1] + x[2] * e[2]);
    m[13] = -(y[0] * e[0] + y[1] * e[1] + y[2] * e[2]);
    m[14] = -(z[0] * e[0] + z[1] * e[1] + z[2] * e[2]);
    return m;
  }
  function placed(p, dir, width, len) {   // +z of a unit arrow onto dir at p, scaled
    const n = Math.hypot(...dir); const z = dir.map(v => v / n);
    const a = Math.abs(z[2]) < 0.9 ? [0, 0, 1] : [1, 0, 0];
    let x = [a[1] * z[2] - a[2] * z[1], a[2] * z[0] - a[0] * z[2], a[0] * z[1] - a[1] * z[0]];
    const xl = Math.hypot(...x); x = x.map(v => v / xl);
    const y = [z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]];
    const m = I4();
    for (let i = 0; i < 3; i++) { m[i] = x[i] * width; m[4 + i] = y[i] * width; m[8 + i] = z[i] * len; m[12 + i] = p[i]; }
    return m;
  }

  // ----------------------------------------------------------------- buffers
  function mesh(v, f) {
    const vao = gl.createVertexArray(); gl.bindVertexArray(vao);
    const vb = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, vb);
    gl.bufferData(gl.ARRAY_BUFFER, v, gl.STATIC_DRAW);
    gl.enableVertexAttribArray(aPos); gl.vertexAttribPointer(aPos, 3, gl.FLOAT, false, 0, 0);
    const ib = gl.createBuffer(); gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, ib);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, f, gl.STATIC_DRAW);
    gl.bindVertexArray(null);
    return { vao: vao, count: f.length };
  }
  const geoms = D.geometries.map(g => mesh(b64(g.v, Float32Array), b64(g.f, Uint32Array)));
  const shapes = {}; for (const k in D.shapes) shapes[k] = geoms[D.shapes[k]];
  const lineVao = gl.createVertexArray(), lineBuf = gl.createBuffer();
  gl.bindVertexArray(lineVao); gl.bindBuffer(gl.ARRAY_BUFFER, lineBuf);
  gl.enableVertexAttribArray(aPos); gl.vertexAttribPointer(aPos, 3, gl.FLOAT, false, 0, 0);
  gl.bindVertexArray(null);

  const time = b64(D.time, Float64Array), T = time.length, N = D.n_bodies;
  const poses = b64(D.body_pose, Float32Array);
  const frameOffsets = D.frames.map(f => fromRows(f.offset, 0));
  const visualOffsets = D.visuals.map(v => fromRows(v.offset, 0));
  const nc = D.contacts.names.length;
  const cPoint = nc ? b64(D.contacts.point, Float32Array) : null;
  const cForce = nc ? b64(D.contacts.force, Float32Array) : null;
  const cMode = nc ? b64(D.contacts.mode, Int8Array) : null;
  const path = b64(D.path, Float32Array);
  const lo = D.bounds[0], hi = D.bounds[1], size = D.size;

  // ----------------------------------------------------------------- drawing
  function draw(g, M, color, lit) {
    gl.uniformMatrix4fv(U.M, false, M); gl.uniform4fv(U.color, color); gl.uniform1i(U.lit, lit);
    gl.bindVertexArray(g.vao); gl.drawElements(gl.TRIANGLES, g.count, gl.UNSIGNED_INT, 0);
  }
  function lines(xyz, color, mode) {
    gl.uniformMatrix4fv(U.M, false, I4()); gl.uniform4fv(U.color, color); gl.uniform1i(U.lit, 0);
    gl.bindVertexArray(lineVao); gl.bindBuffer(gl.ARRAY_BUFFER, lineBuf);
    gl.bufferData(gl.ARRAY_BUFFER, xyz, gl.DYNAMIC_DRAW);
    gl.drawArrays(mode === undefined ? gl.LINES : mode, 0, xyz.length / 3);
  }
  const grid = (function () {
    const cx = (lo[0] + hi[0]) / 2, cy = (lo[1] + hi[1]) / 2;
    const half = Math.max(hi[0] - lo[0], hi[1] - lo[1]) / 2 + 2 * size;
    const step = Math.pow(10, Math.floor(Math.log10(half))) / 5;   // 25 to 50 lines each way
    const out = [];
    for (let s = -Math.ceil(half / step) * step; s <= half + 1e-9; s += step) {
      out.push(cx + s, cy - half, 0, cx + s, cy + half, 0, cx - half, cy + s, 0, cx + half, cy + s, 0);
    }
    return { xyz: new Float32Array(out), quad: new Float32Array([cx - half, cy - half, 0, cx + half, cy - half, 0, cx + half, cy + half, 0, cx - half, cy - half, 0, cx + half, cy + half, 0, cx - half, cy + half, 0]) };
  })();
  const MODE_COLOR = [[0.55, 0.55, 0.58, 1], [0.1, 0.45, 0.9, 1], [0.1, 0.7, 0.25, 1], [0.95, 0.55, 0.05, 1]];
  const EVENT_COLOR = { "touch-down": [0.9, 0.1, 0.1, 0.85], "lift-off": [0.2, 0.3, 0.95, 0.85], "slip": [0.95, 0.55, 0.05, 0.85], "stick": [0.1, 0.7, 0.25, 0.85] };

  const view = { az: D.camera.azimuth, el: D.camera.elevation, dist: D.camera.distance, target: D.camera.target.slice(), pan: [0, 0, 0] };
  const ui = { t: time[0], playing: true, speed: 1, follow: D.camera.follow, last: null };

  function sampleAt(t) {            // the last sample at or before t
    let a = 0, b = T - 1;
    if (t >= time[b]) return b;
    while (b - a > 1) { const m = (a + b) >> 1; if (time[m] <= t) a = m; else b = m; }
    return a;
  }
  function render() {
    const w = canvas.clientWidth, h = canvas.clientHeight, dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
    }
    gl.viewport(0, 0, canvas.width, canvas.height);
    gl.clearColor(0.957, 0.961, 0.969, 1); gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST); gl.enable(gl.BLEND); gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    const k = sampleAt(ui.t);
    const body = j => fromRows(poses, (k * N + j) * 12);
    const base = body(0);
    const tgt = ui.follow ? [base[12] + view.pan[0], base[13] + view.pan[1], base[14] + view.pan[2]]
                          : [view.target[0] + view.pan[0], view.target[1] + view.pan[1], view.target[2] + view.pan[2]];
    const ce = Math.cos(view.el), eye = [tgt[0] + view.dist * ce * Math.cos(view.az), tgt[1] + view.dist * ce * Math.sin(view.az), tgt[2] + view.dist * Math.sin(view.el)];
    gl.uniformMatrix4fv(U.P, false, perspective(0.7, canvas.width / Math.max(canvas.height, 1), view.dist / 200, view.dist * 50));
    gl.uniformMatrix4fv(U.V, false, lookAt(eye, tgt, [0, 0, 1]));
    // ground
    gl.uniformMatrix4fv(U.M, false, I4());
    gl.enable(gl.POLYGON_OFFSET_FILL); gl.polygonOffset(1, 1);
    lines(grid.quad, [0.9, 0.91, 0.93, 1], gl.TRIANGLES);
    gl.disable(gl.POLYGON_OFFSET_FILL);
    lines(grid.xyz, [0.78, 0.8, 0.83, 1]);
    if (D.show_path) lines(path, [0.45, 0.5, 0.85, 0.7], gl.LINE_STRIP);
    if (ui.hide) return finish(k);
    // robot
    const Cs = []; for (let j = 0; j < N; j++) Cs.push(body(j));
    D.visuals.forEach((v, i) => {
      const M = mul(Cs[v.body], visualOffsets[i]);
      for (const p of v.parts) draw(geoms[p[0]], M, p[1], 1);
    });
    // frames
    if (D.shown_frames.length) {
      const xyz = [], L = D.frame_scale;
      const cols = [[0.9, 0.15, 0.15, 1], [0.15, 0.7, 0.2, 1], [0.15, 0.3, 0.95, 1]];
      for (let a = 0; a < 3; a++) {
        xyz.length = 0;
        for (const f of D.shown_frames) {
          const M = mul(Cs[D.frames[f].body], frameOffsets[f]);
          xyz.push(M[12], M[13], M[14], M[12] + L * M[a * 4], M[13] + L * M[a * 4 + 1], M[14] + L * M[a * 4 + 2]);
        }
        gl.disable(gl.DEPTH_TEST); lines(new Float32Array(xyz), cols[a]); gl.enable(gl.DEPTH_TEST);
      }
    }
    // contacts: points by mode, force arrows, event marks
    for (let c = 0; c < nc; c++) {
      const o = (k * nc + c) * 3, p = [cPoint[o], cPoint[o + 1], cPoint[o + 2]];
      const r = 0.022 * size;
      gl.disable(gl.DEPTH_TEST);                 // the point shows through its foot
      draw(shapes.sphere, placed(p, [0, 0, 1], r, r), MODE_COLOR[cMode[k * nc + c]] || MODE_COLOR[0], 1);
      gl.enable(gl.DEPTH_TEST);
      const f = [cForce[o], cForce[o + 1], cForce[o + 2]], fn = Math.hypot(...f);
      if (fn * D.contacts.scale > 1e-3 * size) draw(shapes.arrow, placed(p, f, 0.3 * size, fn * D.contacts.scale), [0.85, 0.1, 0.45, 1], 1);
    }
    const win = D.event_window;
    for (const e of D.events) {
      const age = ui.t - e.t;
      if (age < -1e-12 || age > win) continue;
      const r = (0.05 + 0.06 * age / win) * size;
      gl.depthMask(false);
      draw(shapes.sphere, placed(e.point, [0, 0, 1], r, r), EVENT_COLOR[e.kind] || [0, 0, 0, 0.8], 1);
      gl.depthMask(true);
    }
    finish(k);
  }
  function finish(k) {
    document.getElementById("clock").textContent = "t = " + ui.t.toFixed(3) + " s";
    const slider = document.getElementById("scrub");
    if (document.activeElement !== slider) slider.value = String(Math.round(1000 * (ui.t - time[0]) / Math.max(time[T - 1] - time[0], 1e-12)));
    document.body.dataset.sample = String(k);
  }

  // -------------------------------------------------------------- controls
  const play = document.getElementById("play");
  let looping = false;
  function setPlaying(on) {
    ui.playing = on; ui.last = null; play.textContent = on ? "\u275a\u275a" : "\u25b6";
    if (on && !looping) { looping = true; requestAnimationFrame(frame); }
  }
  play.onclick = () => { if (!ui.playing && ui.t >= time[T - 1]) ui.t = time[0]; setPlaying(!ui.playing); };
  document.getElementById("scrub").oninput = e => { setPlaying(false); ui.t = time[0] + (time[T - 1] - time[0]) * Number(e.target.value) / 1000; render(); };
  document.getElementById("speed").onchange = e => { ui.speed = Number(e.target.value); };
  const follow = document.getElementById("follow");
  follow.checked = ui.follow; follow.onchange = e => { ui.follow = e.target.checked; view.pan = [0, 0, 0]; render(); };
  window.addEventListener("keydown", e => { if (e.code === "Space") { e.preventDefault(); play.onclick(); } });
  let drag = null;
  canvas.addEventListener("pointerdown", e => { drag = { x: e.clientX, y: e.clientY, pan: e.shiftKey || e.button === 2 }; canvas.setPointerCapture(e.pointerId); });
  canvas.addEventListener("pointerup", () => { drag = null; });
  canvas.addEventListener("contextmenu", e => e.preventDefault());
  canvas.addEventListener("pointermove", e => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y; drag.x = e.clientX; drag.y = e.clientY;
    if (drag.pan) {
      const s = view.dist / canvas.clientHeight;
      view.pan[0] += s * (dx * Math.sin(view.az) - dy * Math.cos(view.az) * Math.sin(view.el)) * -1;
      view.pan[1] += s * (-dx * Math.cos(view.az) - dy * Math.sin(view.az) * Math.sin(view.el)) * -1;
      view.pan[2] += s * dy * Math.cos(view.el);
    } else {
      view.az -= dx * 0.008; view.el = Math.max(-1.5, Math.min(1.5, view.el + dy * 0.008));
    }
    render();
  });
  canvas.addEventListener("wheel", e => { e.preventDefault(); view.dist *= Math.exp(e.deltaY * 0.001); render(); }, { passive: false });
  function fromHash() {       // #t=0.3 shows that time, paused; #play plays; #hide=robot
    const h = new URLSearchParams(location.hash.slice(1));
    if (h.has("t")) { const t = Number(h.get("t")); if (isFinite(t)) { ui.t = Math.min(Math.max(t, time[0]), time[T - 1]); setPlaying(false); } }
    if (h.has("play")) setPlaying(true);
    ui.hide = h.get("hide") === "robot";     // the scene without the moving parts
    if (h.has("speed")) ui.speed = Number(h.get("speed")) || 1;
  }
  window.addEventListener("hashchange", () => { fromHash(); render(); });
  const ticks = document.getElementById("ticks"), span = Math.max(time[T - 1] - time[0], 1e-12);
  for (const e of D.events) {
    const d = document.createElement("div"); d.className = "tick " + e.kind;
    d.style.left = (100 * (e.t - time[0]) / span) + "%";
    d.title = e.kind + " of " + e.contact + " at t = " + e.t.toFixed(4) + " s";
    ticks.appendChild(d);
  }
  function frame(now) {            // runs while playing; a paused page draws on demand
    if (!ui.playing) { looping = false; return; }
    if (ui.last !== null) {
      ui.t += (now - ui.last) / 1000 * ui.speed;
      if (ui.t > time[T - 1]) ui.t = time[0];
    }
    ui.last = now;
    render();
    requestAnimationFrame(frame);
  }
  try {
    setPlaying(true); fromHash(); render();
    document.body.dataset.state = "drawn";
    status.textContent = D.note;
  } catch (err) { fail("Drawing failed: " + err.message); }
})();
