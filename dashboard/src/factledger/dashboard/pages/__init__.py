"""The dashboard's pages, one module each (`render()`), wired up by `dashboard.app`."""
