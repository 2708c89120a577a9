(* The listening sockets: handed over by systemd or opened here, tuned,
   and the hosts and ports of the configuration made concrete. *)


(* [f] on every element, or the first failure. *)
let map_all f l =
  List.fold_right
    (fun x acc ->
      match (acc, f x) with
      | Error e, _ | _, Error e -> Error e
      | Ok l, Ok y -> Ok (y :: l))
    l (Ok [])

(* {1 Sockets handed over (systemd socket activation)} *)

let listen_fds_start = 3

let systemd_listen_fds () =
  let get v = match Sys.getenv_opt v with Some "" | None -> None | Some x -> Some x in
  match (get "LISTEN_PID", get "LISTEN_FDS") with
  | None, _ | _, None -> Ok []
  | Some pid, Some n -> (
      (* sd_listen_fds(3) with unset_environment: children (a handler's
         subprocess, a restarted worker) must not take them again. *)
      List.iter (fun v -> Unix.putenv v "") [ "LISTEN_PID"; "LISTEN_FDS"; "LISTEN_FDNAMES" ];
      match (int_of_string_opt pid, int_of_string_opt n) with
      | Some pid, _ when pid <> Unix.getpid () -> Ok []
      | Some _, Some n when n >= 1 && n <= 1024 ->
          Ok (List.init n (fun i -> listen_fds_start + i))
      | _ -> Error (Printf.sprintf "LISTEN_PID=%s LISTEN_FDS=%s: not a valid socket hand-over" pid n))

(* The address of a handed-over socket, checked to be a listening TCP
   socket, made non-blocking and close-on-exec like ours. *)
let inherit_one fd =
  let u = Syscall.unix_of_fd fd in
  match
    (Unix.getsockname u, Unix.getsockopt_int u Unix.SO_TYPE, Unix.getsockopt u Unix.SO_ACCEPTCONN)
  with
  | Unix.ADDR_INET (a, port), ty, true when ty = 1 (* SOCK_STREAM *) ->
      Unix.set_nonblock u;
      Unix.set_close_on_exec u;
      Ok (Unix.string_of_inet_addr a, port)
  | Unix.ADDR_UNIX _, _, _ -> Error (Printf.sprintf "fd %d: a Unix socket, not TCP" fd)
  | _, _, false -> Error (Printf.sprintf "fd %d: not a listening socket" fd)
  | _ -> Error (Printf.sprintf "fd %d: not a stream socket" fd)
  | exception Unix.Unix_error (e, _, _) -> Error (Printf.sprintf "fd %d: %s" fd (Unix.error_message e))

let adopt (c : Config.t) =
  if c.listen_fds = [] then Ok c
  else
    match map_all inherit_one c.listen_fds with
    | Ok listen -> Ok { c with listen }
    | Error e -> Error ("inherited socket: " ^ e)

(* {1 Hosts and ports} *)

(* A host name becomes the first address it resolves to. *)
let resolve_host host =
  match Unix.inet_addr_of_string host with
  | _ -> Ok host
  | exception Failure _ -> (
      match Unix.getaddrinfo host "" [ Unix.AI_SOCKTYPE Unix.SOCK_STREAM ] with
      | { Unix.ai_addr = Unix.ADDR_INET (a, _); _ } :: _ -> Ok (Unix.string_of_inet_addr a)
      | _ -> Error (Printf.sprintf "%s: no address found" host)
      | exception Unix.Unix_error (e, _, _) -> Error (host ^ ": " ^ Unix.error_message e))

let resolve_list l = map_all (fun (host, port) -> Result.map (fun a -> (a, port)) (resolve_host host)) l

let resolve (c : Config.t) =
  match resolve_list (Config.addresses c) with
  | Error e -> Error e
  | Ok listen -> (
      let c = { c with listen; host = fst (List.hd listen) } in
      match c.tls with
      | None -> Ok c
      | Some t ->
          Result.map
            (fun redirect_http -> { c with tls = Some { t with redirect_http } })
            (resolve_list t.redirect_http))

let bound_ports (c : Config.t) lfds =
  let ports = List.map Syscall.local_port lfds in
  let addresses = Config.addresses c in
  let n = List.length addresses in
  let listen = List.mapi (fun i (h, _) -> (h, List.nth ports i)) addresses in
  let tls =
    Option.map
      (fun (t : Config.tls) ->
        { t with redirect_http = List.mapi (fun i (h, _) -> (h, List.nth ports (n + i))) t.redirect_http })
      c.tls
  in
  { c with listen; port = snd (List.hd listen); tls }

(* {1 Opening} *)

(* Tuned before it listens, so no connection is accepted without the
   options: accepted sockets inherit TCP_NODELAY and TCP_NOTSENT_LOWAT from
   it (Linux), which saves a setsockopt per connection. A failed option
   only costs speed, so it is logged, not fatal. *)
let tune (c : Config.t) lfd =
  let set what opt v =
    let r = Syscall.setsockopt lfd opt v in
    if r < 0 then Log.msg "setsockopt %s: %s (continuing without it)" what (Syscall.error_message r)
  in
  set "TCP_NODELAY" Syscall.Tcp_nodelay 1;
  if c.send_lowat > 0 then set "TCP_NOTSENT_LOWAT" Syscall.Tcp_notsent_lowat c.send_lowat;
  if c.defer_accept then set "TCP_DEFER_ACCEPT" Syscall.Tcp_defer_accept 1

(* Bound without SO_REUSEPORT, so a second server started on the same
   address by mistake gets "address already in use" instead of half of
   the traffic. The fd, or [-errno]. *)
let open_one (c : Config.t) (host, port) =
  let lfd = Syscall.socket_bind ~host ~port ~reuseport:false in
  if lfd < 0 then lfd
  else begin
    tune c lfd;
    let r = Syscall.listen lfd c.backlog in
    if r < 0 then begin
      ignore (Syscall.close lfd : int);
      r
    end
    else lfd
  end

let close_all fds = List.iter (fun fd -> if fd >= 0 then ignore (Syscall.close fd : int)) fds

let open_all (c : Config.t) =
  let inherited = ref c.listen_fds in
  let rec go acc = function
    | [] -> Ok (List.rev acc)
    | (_, _, Config.Serve) :: rest when !inherited <> [] ->
        let fd = List.hd !inherited in
        inherited := List.tl !inherited;
        tune c fd;
        go (fd :: acc) rest
    | (host, port, _) :: rest ->
        let fd = open_one c (host, port) in
        if fd < 0 then begin
          close_all acc;
          Error (Printf.sprintf "listen on %s: %s" (Config.url host port) (Syscall.error_message fd))
        end
        else go (fd :: acc) rest
  in
  go [] (Config.endpoints c)
