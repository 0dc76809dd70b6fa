# reassignd: one image for every role (controller, broker, cluster); the subcommand picks it.
#   docker build -t reassignd .
#   docker run --rm reassignd controller --help
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY reassignd ./reassignd
RUN pip install . \
    && rm -rf /src \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin reassignd

WORKDIR /
USER reassignd
EXPOSE 8080
# SIGTERM stops a reassignd process cleanly: its ZooKeeper session is closed, ephemerals vanish.
STOPSIGNAL SIGTERM
ENTRYPOINT ["reassignd"]
CMD ["--help"]
