# Gmail MCP server over streamable HTTP, for a home server, a container platform or a team machine.
#
#   docker build -t gmail-mcp .
#   docker run -d --name gmail-mcp -p 127.0.0.1:8080:8080 --read-only --tmpfs /tmp \
#     -v gmail-mcp-data:/data -e GMAIL_MCP_HTTP_TOKEN="$(cat http-token.txt)" gmail-mcp
#
# Tokens are made on a machine with a browser (`python server/auth_cli.py --account NAME`) and copied into the
# /data volume (/data/.token.json is the `default` account, /data/tokens/NAME.json the others). Nothing secret is
# baked into the image: the HTTP token and the token encryption key come from the environment or secrets at run
# time. Put a reverse proxy with TLS in front (see README "Deployment").

FROM python:3.12-slim AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml requirements.txt README.md LICENSE ./
COPY server ./server
# The project and its runtime dependencies only, at the versions requirements.txt pins (tests are not packaged).
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --constraint requirements.txt . \
 && /opt/venv/bin/python -m compileall -q /opt/venv

FROM python:3.12-slim
# No .pyc writes at run time (the root filesystem may be read-only); logs straight to stderr.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    GMAIL_MCP_HOME=/data \
    HOME=/tmp
RUN groupadd --gid 10001 gmail && useradd --uid 10001 --gid gmail --no-create-home --shell /usr/sbin/nologin gmail \
 && mkdir -p /data/tokens && chown -R 10001:10001 /data && chmod 700 /data /data/tokens
COPY --from=build /opt/venv /opt/venv
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"]
ENTRYPOINT ["gmail-mcp"]
# Refuses to start without GMAIL_MCP_HTTP_TOKEN (or GMAIL_MCP_HTTP_TOKEN_FILE): it listens on every interface.
CMD ["--http", "0.0.0.0:8080"]
