open Slot

let plain c = c.ssl = Openssl.none
let read c = if plain c then Plain.read c else Tls.read c
let write c = if plain c then Plain.write c else Tls.write c
let buffered c = (not (plain c)) && Tls.buffered c
let close_notify c = if not (plain c) then Tls.close_notify c
let release c = if not (plain c) then Tls.release c

(* Setting TCP_NODELAY (again) makes the kernel send what it holds at
   once: bytes a write gave with MSG_MORE, expecting more that did not
   come. The same for both transports: kTLS records wait in the socket
   too, OpenSSL's own are pending output ([unsent]). *)
let push c = ignore (Syscall.setsockopt c.fd Syscall.Tcp_nodelay 1 : int)
