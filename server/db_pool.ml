type 'a conn = { value : 'a; mutable busy : bool }

type 'a t = {
  connect : unit -> 'a;
  close : 'a -> unit;
  lock : Mutex.t;
  conns : (int * int, 'a conn) Hashtbl.t;  (** (pid, thread id) *)
  mutable closed : bool;
}

let create ?(close = ignore) connect =
  { connect; close; lock = Mutex.create (); conns = Hashtbl.create 8; closed = false }

let locked t f =
  Mutex.lock t.lock;
  match f () with
  | v -> Mutex.unlock t.lock; v
  | exception e -> Mutex.unlock t.lock; raise e

let quiet_close t v = try t.close v with _ -> ()

let use t f =
  let key = (Unix.getpid (), Thread.id (Thread.self ())) in
  let existing =
    locked t (fun () ->
        if t.closed then failwith "Db_pool.use: the pool is closed";
        match Hashtbl.find_opt t.conns key with
        | Some c -> c.busy <- true; Some c
        | None -> None)
  in
  let c =
    match existing with
    | Some c -> c
    | None ->
        (* Opened outside the lock: connecting may take long. *)
        let c = { value = t.connect (); busy = true } in
        locked t (fun () -> Hashtbl.replace t.conns key c);
        c
  in
  let release ~drop =
    let close_now =
      locked t (fun () ->
          c.busy <- false;
          if drop || t.closed then (Hashtbl.remove t.conns key; true) else false)
    in
    if close_now then quiet_close t c.value
  in
  match f c.value with
  | v -> release ~drop:false; v
  | exception e -> release ~drop:true; raise e

let offload t c f k = Ctx.offload c (fun () -> use t f) k

let close_all t =
  let pid = Unix.getpid () in
  let idle =
    locked t (fun () ->
        t.closed <- true;
        let idle = Hashtbl.fold (fun (p, _ as key) c acc -> if p = pid && not c.busy then (key, c) :: acc else acc) t.conns [] in
        List.iter (fun (key, _) -> Hashtbl.remove t.conns key) idle;
        idle)
  in
  List.iter (fun (_, c) -> quiet_close t c.value) idle

let opened t =
  let pid = Unix.getpid () in
  locked t (fun () -> Hashtbl.fold (fun (p, _) _ n -> if p = pid then n + 1 else n) t.conns 0)
