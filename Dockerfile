# FactLedger service image. Build: docker build -t factledger .
# The builder stage has the C compiler: the wheel it builds carries the hot modules compiled
# with mypyc (setup.py), and any dependency without a wheel builds there too. The final
# stage only gets the finished virtualenv, so no build tools ship.
FROM python:3.11-slim AS builder
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential \
    && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml setup.py MANIFEST.in README.md ./
COPY tools ./tools
COPY factledger ./factledger
COPY processors ./processors
COPY collector ./collector
COPY dashboard ./dashboard
COPY schemas ./schemas
COPY verifiers ./verifiers
# The image runs the service and (docker-compose.yml) the dashboard: both extras. The last
# step fails the build unless the installed package imports its compiled modules.
RUN pip wheel --no-deps --wheel-dir /wheels . \
    && pip install "$(ls /wheels/factledger-*.whl)[all]" \
    && cd / && python -c "from factledger.compiled import compiled_status; \
status = compiled_status(); assert status.active, status.reason; print(status.modules)"

FROM python:3.11-slim
RUN useradd --system --uid 10001 --user-group --create-home factledger \
    && mkdir -m 0700 /data && chown factledger:factledger /data
# Same path as in the builder: the venv's scripts carry absolute shebangs.
COPY --from=builder /opt/venv /opt/venv
# It listens on 0.0.0.0, so the query API is closed: the service refuses to start until
# FACTLEDGER_READ_TOKENS is set (or FACTLEDGER_API_OPEN=1 opens the API on purpose).
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 FACTLEDGER_DATA_DIR=/data \
    FACTLEDGER_API_OPEN=0
USER factledger
WORKDIR /data
VOLUME ["/data"]
EXPOSE 4318 4317 8501
# The slim image has no curl or wget; Python is there anyway.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=5 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:4318/healthz', timeout=2)"]
ENTRYPOINT ["factledger"]
CMD ["serve", "--host", "0.0.0.0"]
