"""L4 artifact store: content-addressed blobs and their catalog (SPEC §3.2)."""
