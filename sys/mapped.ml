external map : int -> Httpz.Bigstring.t = "httpz_buffer_map"
external unmap : Httpz.Bigstring.t -> int = "httpz_buffer_unmap"
external map_shared : int -> Httpz.Bigstring.t = "httpz_buffer_map_shared"

external cas64 :
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_buffer_cas64_byte" "httpz_buffer_cas64"
  [@@noalloc]
