(* Placeholder while the real implementation is being written. *)
type config = {
  host : string; port : int; workers : int; max_connections : int; backlog : int;
  read_buffer : int; write_buffer : int; max_body : int; header_timeout : float;
  idle_timeout : float; body_timeout : float; write_timeout : float; grace_period : float;
  stats : bool; access_log : out_channel option; server_name : string;
  root : string option; on_listen : int -> unit;
}
let cpu_count () = 1
let default_config = {
  host = "127.0.0.1"; port = 8080; workers = 1; max_connections = 10_000; backlog = 4096;
  read_buffer = 32768; write_buffer = 16384; max_body = 1 lsl 20; header_timeout = 10.;
  idle_timeout = 60.; body_timeout = 30.; write_timeout = 30.; grace_period = 10.;
  stats = false; access_log = None; server_name = "httpz"; root = None; on_listen = ignore }
let run _ _ = prerr_endline "httpz: server not implemented yet"; 1
