"""Route tables, one module per group of endpoints; ``reassignd.http.app`` mounts them all."""
