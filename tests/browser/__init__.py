"""Browser tests: the dashboard in Debian's Chromium, driven by Playwright."""
