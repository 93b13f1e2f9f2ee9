"""Start and stop a fluxgate server process for the Python suites.

The binary is $FLUXGATE_BIN (make test builds it once for every suite). Each server gets a free loopback port and
its own data directory, and is stopped with SIGTERM, as an operator would.
"""

import base64
import datetime
import hashlib
import json
import os
import secrets
import socket
import subprocess
import time
from pathlib import Path


def binary():
    bin_path = os.environ.get("FLUXGATE_BIN")
    if not bin_path:
        raise RuntimeError("FLUXGATE_BIN is not set: run `make test`, or build with "
                           "`go build -o bin/fluxgate ./cmd/fluxgate` and export FLUXGATE_BIN=$PWD/bin/fluxgate")
    if not os.access(bin_path, os.X_OK):
        raise RuntimeError(f"FLUXGATE_BIN={bin_path} is not an executable")
    return bin_path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A fluxgate serve process on 127.0.0.1:<free port> with data in `data`."""

    def __init__(self, data, args=(), tls=False):
        self.data = Path(data)
        self.port = free_port()
        self.args = list(args)
        self.scheme = "grpc+tls" if tls else "grpc"
        self.log_path = self.data.parent / f"{self.data.name}.log"
        self.proc = None

    @property
    def address(self):
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def start(self, timeout=30):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [binary(), "serve", "--data", str(self.data), "--listen", f"127.0.0.1:{self.port}", "--http", "",
             *self.args],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        # The server listens only once its data directory is recovered.
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"fluxgate exited with {self.proc.returncode} while starting:\n{self.output()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError as e:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"fluxgate did not listen on port {self.port} within {timeout} s") from e
                time.sleep(0.02)

    def stop(self, timeout=30):
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        proc.terminate()
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired as e:
            proc.kill()
            proc.wait()
            raise RuntimeError(f"fluxgate did not stop within {timeout} s of SIGTERM") from e
        finally:
            self.log.close()
        if code != 0:
            raise RuntimeError(f"fluxgate exited with {code} after SIGTERM:\n{self.output()}")

    def output(self):
        return self.log_path.read_text(errors="replace")

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class Secured:
    """What a TLS server with users needs: a self-signed certificate for 127.0.0.1, and a users file with an
    admin `ann`, a user `bob` without grants, and a static API token `svc-etl`."""

    users = {"ann": "ann-password", "bob": "bob-password"}

    def __init__(self, directory):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.cert, self.key = self.dir / "cert.pem", self.dir / "key.pem"
        self.ca = self.cert  # self-signed: the certificate is its own CA
        self.users_file = self.dir / "users.json"
        self.token = secrets.token_urlsafe(24)
        self._write_cert()
        self._write_users()

    def server_args(self):
        return ["--users", str(self.users_file), "--tls-cert", str(self.cert), "--tls-key", str(self.key)]

    def _write_users(self):
        def bcrypt(password):
            out = subprocess.run([binary(), "auth", "hash-password"], input=password.encode(), check=True,
                                 capture_output=True)
            return out.stdout.decode().strip()

        self.users_file.write_text(json.dumps({
            "users": [{"name": "ann", "password_bcrypt": bcrypt(self.users["ann"]), "admin": True},
                      {"name": "bob", "password_bcrypt": bcrypt(self.users["bob"])}],
            "tokens": [{"name": "svc-etl", "token_sha256": hashlib.sha256(self.token.encode()).hexdigest()}],
            "token_secret": base64.b64encode(secrets.token_bytes(32)).decode(),
        }))

    def _write_cert(self):
        import ipaddress

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fluxgate test")])
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                            x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                               critical=False)
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .sign(key, hashes.SHA256()))
        self.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        self.key.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
