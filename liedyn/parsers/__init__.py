"""Model loaders: URDF (``urdf``)."""
