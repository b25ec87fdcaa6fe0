"""The multibody model and its per-call data: the frozen ``Model`` and its
builder (``model``), workspaces (``workspace``) and typed results (``results``)."""
