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

(* Each handed-over socket takes the role its port has in [c]
   ([Config.inherited_role]); the plain and redirect addresses on those
   ports are replaced by the sockets' own, the others stay to be bound. *)
let adopt (c : Config.t) =
  if c.listen_fds = [] then Ok c
  else
    let with_role (host, port) =
      Result.map (fun role -> (host, port, role)) (Config.inherited_role c ~port)
    in
    match map_all (fun fd -> Result.bind (inherit_one fd) with_role) c.listen_fds with
    | Error e -> Error ("inherited socket: " ^ e)
    | Ok inherited ->
        let of_role role = List.filter_map (fun (h, p, r) -> if r = role then Some (h, p) else None) inherited in
        let keep role =
          let taken = of_role role in
          taken
          @ List.filter
              (fun (_, p) -> not (List.exists (fun (_, p') -> p' = p) taken))
              (Config.role_addresses c role)
        in
        if of_role Config.Serve = [] then
          Error
            (Printf.sprintf
               "inherited sockets: all %d are on ports of tls.listen_plain or tls.redirect_http; \
                none is left to serve https"
               (List.length inherited))
        else
          let c = Config.with_role_addresses c Config.Serve (of_role Config.Serve) in
          let c = Config.with_role_addresses c Config.Serve_plain (keep Config.Serve_plain) in
          let c = Config.with_role_addresses c Config.Redirect (keep Config.Redirect) in
          Ok (Config.with_role_addresses c Config.Status (keep Config.Status))

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
  List.fold_left
    (fun acc role ->
      Result.bind acc (fun c ->
          Result.map (Config.with_role_addresses c role) (resolve_list (Config.role_addresses c role))))
    (Ok c) Config.roles

(* [lfds] follow [Config.endpoints c]: each role takes as many as it has
   addresses, in order. *)
let bound_ports (c : Config.t) lfds =
  let ports = ref (List.map Syscall.local_port lfds) in
  let next () =
    let p = List.hd !ports in
    ports := List.tl !ports;
    p
  in
  List.fold_left
    (fun c role ->
      Config.with_role_addresses c role (List.map (fun (h, _) -> (h, next ())) (Config.role_addresses c role)))
    c Config.roles

(* {1 Opening} *)

(* Tuned before it listens, so no connection is accepted without the
   options: accepted sockets inherit TCP_NODELAY and TCP_NOTSENT_LOWAT from
   it (Linux), which saves a setsockopt per connection. A failed option
   only costs speed, so it is logged, not fatal. *)
let tune (c : Config.t) lfd =
  let set what opt v =
    let r = Syscall.setsockopt lfd opt v in
    if r < 0 then Log.warn "setsockopt %s: %s (continuing without it)" what (Syscall.error_message r)
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

(* A handed-over socket stands for the endpoint at its address ([adopt]
   put the sockets' own addresses in [c]); the other endpoints are bound. *)
let open_all (c : Config.t) =
  let inherited = ref (List.map (fun fd -> (fd, inherit_one fd)) c.listen_fds) in
  let take_inherited host port =
    match List.find_opt (fun (_, a) -> a = Ok (host, port)) !inherited with
    | Some (fd, _) ->
        inherited := List.filter (fun (fd', _) -> fd' <> fd) !inherited;
        Some fd
    | None -> None
  in
  let rec go acc = function
    | [] -> Ok (List.rev acc)
    | (host, port, _) :: rest -> (
        match take_inherited host port with
        | Some fd ->
            tune c fd;
            go (fd :: acc) rest
        | None ->
            let fd = open_one c (host, port) in
            if fd < 0 then begin
              close_all acc;
              Error (Printf.sprintf "listen on %s: %s" (Config.url host port) (Syscall.error_message fd))
            end
            else go (fd :: acc) rest)
  in
  go [] (Config.endpoints c)
