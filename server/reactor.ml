(* Timers in a binary heap ordered by deadline; descriptor watches in a
   table by fd, registered in the loop's epoll with token [base + fd]; an
   offload pool of threads that report back through a pipe. *)

type timer = { at : int; seq : int; f : unit -> unit; mutable cancelled : bool }

type watch = {
  r : t;
  fd : int;
  write : bool;
  cb : unit -> unit;
  mutable active : bool;
}

and t = {
  epfd : int;
  base : int;
  mutable heap : timer array;
  mutable size : int;
  mutable seq : int;
  watches : (int, watch list) Hashtbl.t;
  interest : (int, int) Hashtbl.t;  (* fd -> epoll events registered *)
  threads : int;
  mutable pool : pool option;
  mutable turn_hooks : (unit -> unit) list;
}

and pool = {
  lock : Mutex.t;
  work : Condition.t;
  jobs : (unit -> unit) Queue.t;
  finished : (unit -> unit) Queue.t;  (* continuations, for the loop *)
  wake_r : Unix.file_descr;
  wake_w : Unix.file_descr;
}

let log_msg fmt = Printf.eprintf ("httpz: " ^^ fmt ^^ "\n%!")

let the_current = ref None

let current () =
  match !the_current with Some r -> r | None -> failwith "Reactor.current: no server is running"

let dummy = { at = max_int; seq = 0; f = ignore; cancelled = true }

let create ~epfd ~base_token ~threads =
  {
    epfd;
    base = base_token;
    heap = Array.make 16 dummy;
    size = 0;
    seq = 0;
    watches = Hashtbl.create 16;
    interest = Hashtbl.create 16;
    threads = max 1 threads;
    pool = None;
    turn_hooks = [];
  }

let install r = the_current := Some r

let guard what f =
  try f () with e -> log_msg "%s raised %s (ignored)" what (Printexc.to_string e)

(* {1 Timers} *)

let earlier a b = a.at < b.at || (a.at = b.at && a.seq < b.seq)

let swap h i j =
  let x = h.(i) in
  h.(i) <- h.(j);
  h.(j) <- x

let rec up h i =
  if i > 0 then begin
    let p = (i - 1) / 2 in
    if earlier h.(i) h.(p) then (swap h i p; up h p)
  end

let rec down h n i =
  let l = (2 * i) + 1 and rt = (2 * i) + 2 in
  let m = if l < n && earlier h.(l) h.(i) then l else i in
  let m = if rt < n && earlier h.(rt) h.(m) then rt else m in
  if m <> i then (swap h i m; down h n m)

let after r seconds f =
  let at = Syscall.clock_monotonic_ns () + int_of_float (Float.max 0. seconds *. 1e9) in
  r.seq <- r.seq + 1;
  let tm = { at; seq = r.seq; f; cancelled = false } in
  if r.size = Array.length r.heap then begin
    let h = Array.make (2 * r.size) dummy in
    Array.blit r.heap 0 h 0 r.size;
    r.heap <- h
  end;
  r.heap.(r.size) <- tm;
  r.size <- r.size + 1;
  up r.heap (r.size - 1);
  tm

let cancel tm = tm.cancelled <- true

let pop r =
  let top = r.heap.(0) in
  r.size <- r.size - 1;
  r.heap.(0) <- r.heap.(r.size);
  r.heap.(r.size) <- dummy;
  down r.heap r.size 0;
  top

let rec next_timer_ns r =
  if r.size = 0 then max_int
  else if r.heap.(0).cancelled then (ignore (pop r : timer); next_timer_ns r)
  else r.heap.(0).at

let run_timers r ~now_ns =
  while r.size > 0 && r.heap.(0).at <= now_ns do
    let tm = pop r in
    if not tm.cancelled then begin
      tm.cancelled <- true;
      guard "a timer callback" tm.f
    end
  done

(* {1 Watches} *)

let wanted r fd =
  List.fold_left
    (fun acc w -> acc lor if w.write then Syscall.epollout else Syscall.epollin)
    0
    (try Hashtbl.find r.watches fd with Not_found -> [])

(* Brings the epoll registration of [fd] in line with its watches. *)
let sync r fd =
  let want = wanted r fd in
  let have = try Hashtbl.find r.interest fd with Not_found -> 0 in
  if want <> have then begin
    let res =
      if want = 0 then Syscall.epoll_ctl_del r.epfd fd
      else if have = 0 then Syscall.epoll_ctl_add r.epfd fd want (r.base + fd)
      else Syscall.epoll_ctl_mod r.epfd fd want (r.base + fd)
    in
    if res < 0 && want <> 0 then
      invalid_arg ("Reactor.watch: epoll_ctl: " ^ Syscall.error_message res);
    if want = 0 then Hashtbl.remove r.interest fd else Hashtbl.replace r.interest fd want
  end

let watch r fd ~write cb =
  let fd = Syscall.fd_of_unix fd in
  let w = { r; fd; write; cb; active = true } in
  Hashtbl.replace r.watches fd (w :: (try Hashtbl.find r.watches fd with Not_found -> []));
  (try sync r fd
   with e ->
     Hashtbl.replace r.watches fd (List.filter (fun x -> x != w) (Hashtbl.find r.watches fd));
     raise e);
  w

let unwatch w =
  if w.active then begin
    w.active <- false;
    let r = w.r in
    (match List.filter (fun x -> x != w) (try Hashtbl.find r.watches w.fd with Not_found -> []) with
     | [] -> Hashtbl.remove r.watches w.fd
     | l -> Hashtbl.replace r.watches w.fd l);
    sync r w.fd
  end

let dispatch r token mask =
  let fd = token - r.base in
  let ready_in = mask land (Syscall.epollin lor Syscall.epollhup lor Syscall.epollerr) <> 0 in
  let ready_out = mask land (Syscall.epollout lor Syscall.epollhup lor Syscall.epollerr) <> 0 in
  List.iter
    (fun w ->
      if w.active && ((w.write && ready_out) || ((not w.write) && ready_in)) then
        guard "a descriptor callback" w.cb)
    (List.rev (try Hashtbl.find r.watches fd with Not_found -> []))

let pending r = r.size > 0 || Hashtbl.length r.watches > 0

let at_each_turn r f = r.turn_hooks <- r.turn_hooks @ [ f ]

let end_of_turn r =
  match r.turn_hooks with
  | [] -> ()
  | l -> List.iter (fun f -> guard "a turn hook" f) l

(* {1 The offload pool} *)

let rec worker p () =
  Mutex.lock p.lock;
  while Queue.is_empty p.jobs do Condition.wait p.work p.lock done;
  let job = Queue.pop p.jobs in
  Mutex.unlock p.lock;
  job ();
  worker p ()

let drain_finished p () =
  let buf = Bytes.create 64 in
  (try ignore (Unix.read p.wake_r buf 0 64 : int) with Unix.Unix_error _ -> ());
  Mutex.lock p.lock;
  let ks = Queue.fold (fun acc k -> k :: acc) [] p.finished in
  Queue.clear p.finished;
  Mutex.unlock p.lock;
  List.iter (fun k -> guard "an offload continuation" k) (List.rev ks)

let pool r =
  match r.pool with
  | Some p -> p
  | None ->
      let wake_r, wake_w = Unix.pipe ~cloexec:true () in
      Unix.set_nonblock wake_r;
      Unix.set_nonblock wake_w;
      let p =
        {
          lock = Mutex.create ();
          work = Condition.create ();
          jobs = Queue.create ();
          finished = Queue.create ();
          wake_r;
          wake_w;
        }
      in
      ignore (watch r wake_r ~write:false (drain_finished p) : watch);
      for _ = 1 to r.threads do ignore (Thread.create (worker p) () : Thread.t) done;
      r.pool <- Some p;
      p

let offload r job k =
  let p = pool r in
  let run () =
    let finish =
      match job () with
      | () -> k
      | exception e -> fun () -> log_msg "offloaded job raised %s" (Printexc.to_string e); k ()
    in
    Mutex.lock p.lock;
    Queue.push finish p.finished;
    Mutex.unlock p.lock;
    try ignore (Unix.write_substring p.wake_w "." 0 1 : int) with Unix.Unix_error _ -> ()
  in
  Mutex.lock p.lock;
  Queue.push run p.jobs;
  Condition.signal p.work;
  Mutex.unlock p.lock
