"""The custom Starlette app ``langgraph dev`` mounts beside its own API (``http.app``)."""
