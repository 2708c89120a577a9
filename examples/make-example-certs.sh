#!/bin/sh
# Throwaway self-signed certificates for examples/httpz.conf (certs/ beside it):
# example.com and app.example.com, EC P-256, valid 30 days. Never for production.
set -e
dir=$(dirname "$0")/certs
mkdir -p "$dir"
for name in example.com app.example.com; do
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
    -subj "/CN=$name" -addext "subjectAltName=DNS:$name,DNS:*.$name" \
    -keyout "$dir/$name.key" -out "$dir/$name.crt" 2>/dev/null
done
echo "made $dir/example.com.{crt,key} and $dir/app.example.com.{crt,key}"
