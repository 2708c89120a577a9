external cpu_count_raw : unit -> int = "httpz_extra_cpu_count"

let cpu_count () =
  let n = cpu_count_raw () in
  if n >= 1 then n else 1

external signalfd : int list -> int = "httpz_extra_signalfd"

external signalfd_read : (int[@untagged]) -> (int[@untagged])
  = "httpz_extra_signalfd_read_byte" "httpz_extra_signalfd_read"
  [@@noalloc]

external peer_address :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged])
  = "httpz_extra_peer_address_byte" "httpz_extra_peer_address"
  [@@noalloc]

external peer_ip : (int[@untagged]) -> Bytes.t -> (int[@untagged])
  = "httpz_extra_peer_ip_byte" "httpz_extra_peer_ip"
  [@@noalloc]

let peer_address_max = 46



external fd_path :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_extra_fd_path_byte" "httpz_extra_fd_path"
  [@@noalloc]

external gc_marking : unit -> bool = "httpz_extra_gc_marking" [@@noalloc]

external open_log : string -> create:bool -> mode:int -> int = "httpz_extra_open_log" [@@noalloc]
