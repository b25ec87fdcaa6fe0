"""The algorithms, one module each: kinematics, inverse, forward and hybrid
dynamics (and the articulated-body passes they share), the closed form,
batches, frames, inverse kinematics and centroidal quantities."""
