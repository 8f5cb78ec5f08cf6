#!/usr/bin/env bash
# Writes deploy/kubernetes/web/ for kustomization.yaml's secretGenerator: a CA for this
# cluster's exporters, a server certificate for reachability-exporter.reachability.svc (the name
# the ServiceMonitor verifies), a random scrape password and its bcrypt hash (cost 12) in an
# exporter-toolkit web configuration. Run once; rerun to rotate (then kubectl apply -k again:
# the exporters re-read the Secret without a restart). Needs openssl and python3 (or htpasswd).
set -euo pipefail
cd "$(dirname "$0")"
umask 077
mkdir -p web
cd web
name=reachability-exporter.reachability.svc
[ -s ca.key ] || openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
  -subj "/CN=reachability-exporter CA" -addext basicConstraints=critical,CA:TRUE \
  -addext keyUsage=critical,keyCertSign,cRLSign -keyout ca.key -out ca.crt 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$name" \
  -keyout tls.key -out tls.csr 2>/dev/null
printf 'subjectAltName=DNS:%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$name" >tls.ext
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 -extfile tls.ext \
  -out tls.crt 2>/dev/null
rm -f tls.csr tls.ext
printf prometheus >username
openssl rand -base64 24 | tr -d '\n' >password
if command -v htpasswd >/dev/null; then
  hash=$(htpasswd -nbBC 12 x "$(cat password)" | cut -d: -f2)
else
  hash=$(python3 -c 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 12)))' "$(cat password)")
fi
cat >web-config.yml <<YAML
# Written by make-web-secret.sh. The exporter-toolkit format (see the README, "Securing the endpoint").
tls_server_config:
  cert_file: tls.crt
  key_file: tls.key
  min_version: TLS12
http_server_config:
  headers:
    X-Content-Type-Options: nosniff
basic_auth_users:
  prometheus: $hash
YAML
echo "wrote $(pwd): web-config.yml tls.crt tls.key (exporter), ca.crt username password (Prometheus); ca.key stays here"
