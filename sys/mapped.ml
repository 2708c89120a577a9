external map : int -> Httpz.Bigstring.t = "httpz_buffer_map"
external unmap : Httpz.Bigstring.t -> int = "httpz_buffer_unmap"
