"""Serving a directory from nginx on 127.0.0.1 for the bench scripts."""
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

NGINX_CONF = """
daemon off;
worker_processes {workers};
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 1024; }}
http {{
    types {{ text/html html; text/css css; application/javascript js; }}
    default_type application/octet-stream;
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    {http_extra}
    server {{
        listen {ip}:{port};
        root {root};
        {server_extra}
    }}
}}
"""


def free_port(ip="127.0.0.1"):
    with socket.socket() as s:
        s.bind((ip, 0))
        return s.getsockname()[1]


def wait_listening(port, ip="127.0.0.1"):
    for _ in range(600):
        try:
            socket.create_connection((ip, port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on {ip}:{port}")


@contextlib.contextmanager
def nginx(root, http_extra="", server_extra="", workers=1, ip="127.0.0.1"):
    """Serves `root` on `ip` until the block ends; yields the port. The
    extras are nginx directives for the http and server blocks."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(binary):
        sys.exit("nginx is missing: apt-get install -y nginx")
    tmp = tempfile.mkdtemp(prefix="nginx-")
    port = free_port(ip)
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(tmp=tmp, ip=ip, port=port, root=root, workers=workers,
                                  http_extra=http_extra, server_extra=server_extra))
    server = subprocess.Popen([binary, "-c", conf])
    try:
        wait_listening(port, ip)
        yield port
    finally:
        server.send_signal(signal.SIGQUIT)
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)
