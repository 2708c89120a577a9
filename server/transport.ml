open Slot

let plain c = c.ssl = Openssl.none
let read c = if plain c then Plain.read c else Tls.read c
let write c = if plain c then Plain.write c else Tls.write c
let write_now c = if plain c then Plain.write_now c else Tls.write_now c
let buffered c = (not (plain c)) && Tls.buffered c
let close_notify c = if not (plain c) then Tls.close_notify c
let release c = if not (plain c) then Tls.release c
