(* Timers in a binary heap ordered by deadline, each knowing its index so
   that a cancelled one leaves the heap at once (with its closure): the
   heap holds live timers only, whatever is cancelled behind a long one.
   Descriptor watches in a table by fd, registered in the loop's epoll with
   token [base + fd]; an offload pool of threads that report back through
   a pipe, with a bounded queue of jobs that can be dropped before they
   start. *)

type timer = {
  heap : heap;
  at : int;
  seq : int;
  mutable f : unit -> unit;  (** [ignore] once fired or cancelled *)
  mutable idx : int;  (** its place in [heap], [-1] once out of it *)
}

and heap = { mutable arr : timer array; mutable size : int }

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
  timers : heap;
  mutable seq : int;
  watches : (int, watch list) Hashtbl.t;
  interest : (int, int) Hashtbl.t;  (* fd -> epoll events registered *)
  threads : int;
  queue_limit : int;
  mutable pool : pool option;
  mutable turn_hooks : (unit -> unit) list;
  mutable clock : unit -> int;
      (** monotonic ns: the system's, or the in-memory runtime's
          ({!Testing}), whose time moves only when it says so *)
}

and pool = {
  lock : Mutex.t;
  work : Condition.t;
  jobs : job Queue.t;  (** queued jobs, and dropped ones not yet skipped *)
  mutable waiting : int;  (** the [Queued] jobs in [jobs] *)
  mutable unfinished : int;
      (** jobs accepted whose continuation has not run, nor been dropped *)
  finished : (unit -> unit) Queue.t;  (* continuations, for the loop *)
  wake_r : Unix.file_descr;
  wake_w : Unix.file_descr;
}

and job_state = Queued | Started | Dropped

and job = {
  p : pool;
  mutable run : unit -> unit;  (** [ignore] once dropped *)
  mutable state : job_state;  (** under [p.lock] *)
}


let the_current = ref None

let current () =
  match !the_current with Some r -> r | None -> failwith "Reactor.current: no server is running"

let default_queue_per_thread = 64

let no_heap = { arr = [||]; size = 0 }
let dummy = { heap = no_heap; at = max_int; seq = 0; f = ignore; idx = -1 }
let min_heap = 16

let create ~epfd ~base_token ~threads ~queue =
  let threads = max 1 threads in
  let queue_limit = if queue <= 0 then threads * default_queue_per_thread else queue in
  {
    epfd;
    base = base_token;
    timers = { arr = Array.make min_heap dummy; size = 0 };
    seq = 0;
    watches = Hashtbl.create 16;
    interest = Hashtbl.create 16;
    threads;
    queue_limit;
    pool = None;
    turn_hooks = [];
    clock = Syscall.clock_monotonic_ns;
  }

let install r = the_current := Some r

let guard what f =
  try f () with e -> Log.error "%s raised %s (ignored)" what (Printexc.to_string e)

(* {1 Timers} *)

let earlier a b = a.at < b.at || (a.at = b.at && a.seq < b.seq)

let place h i tm =
  h.arr.(i) <- tm;
  tm.idx <- i

let rec up h i =
  if i > 0 then begin
    let p = (i - 1) / 2 in
    let x = h.arr.(i) and y = h.arr.(p) in
    if earlier x y then (place h p x; place h i y; up h p)
  end

let rec down h i =
  let n = h.size in
  let l = (2 * i) + 1 and rt = (2 * i) + 2 in
  let m = if l < n && earlier h.arr.(l) h.arr.(i) then l else i in
  let m = if rt < n && earlier h.arr.(rt) h.arr.(m) then rt else m in
  if m <> i then begin
    let x = h.arr.(i) and y = h.arr.(m) in
    place h m x;
    place h i y;
    down h m
  end

let resize h len =
  let a = Array.make len dummy in
  Array.blit h.arr 0 a 0 h.size;
  h.arr <- a

let remove_at h i =
  let tm = h.arr.(i) in
  let last = h.size - 1 in
  h.size <- last;
  if i < last then begin
    let moved = h.arr.(last) in
    h.arr.(last) <- dummy;
    place h i moved;
    if i > 0 && earlier moved h.arr.((i - 1) / 2) then up h i else down h i
  end
  else h.arr.(i) <- dummy;
  tm.idx <- -1;
  (* After a burst of timers the array shrinks back, never under a
     quarter full. *)
  let len = Array.length h.arr in
  if len > min_heap && h.size < len / 4 then resize h (len / 2)

let after r seconds f =
  (* A wait of zero (or less) is due at once: the loop's next turn runs
     it without waiting for the clock to move on. *)
  let at =
    if seconds <= 0. then 0 else r.clock () + int_of_float (seconds *. 1e9)
  in
  r.seq <- r.seq + 1;
  let h = r.timers in
  let tm = { heap = h; at; seq = r.seq; f; idx = -1 } in
  if h.size = Array.length h.arr then resize h (2 * h.size);
  place h h.size tm;
  h.size <- h.size + 1;
  up h (h.size - 1);
  tm

let cancel tm =
  if tm.idx >= 0 then remove_at tm.heap tm.idx;
  tm.f <- ignore

let next_timer_ns r = if r.timers.size = 0 then max_int else r.timers.arr.(0).at

let run_timers r ~now_ns =
  let h = r.timers in
  while h.size > 0 && h.arr.(0).at <= now_ns do
    let tm = h.arr.(0) in
    remove_at h 0;
    let f = tm.f in
    tm.f <- ignore;
    guard "a timer callback" f
  done

let timers r = r.timers.size

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

let pending r = r.timers.size > 0 || Hashtbl.length r.watches > 0

let at_each_turn r f = r.turn_hooks <- r.turn_hooks @ [ f ]

let end_of_turn r =
  match r.turn_hooks with
  | [] -> ()
  | l -> List.iter (fun f -> guard "a turn hook" f) l

(* {1 The offload pool} *)

(* Takes the next job still queued, skipping dropped ones. *)
let rec next_job p =
  while Queue.is_empty p.jobs do Condition.wait p.work p.lock done;
  let j = Queue.pop p.jobs in
  match j.state with
  | Queued ->
      j.state <- Started;
      p.waiting <- p.waiting - 1;
      j
  | Started | Dropped -> next_job p

let rec worker p () =
  Mutex.lock p.lock;
  let j = next_job p in
  Mutex.unlock p.lock;
  let run = j.run in
  j.run <- ignore;
  run ();
  worker p ()

let drain_finished p () =
  let buf = Bytes.create 64 in
  (try ignore (Unix.read p.wake_r buf 0 64 : int) with Unix.Unix_error _ -> ());
  Mutex.lock p.lock;
  let ks = Queue.fold (fun acc k -> k :: acc) [] p.finished in
  Queue.clear p.finished;
  p.unfinished <- p.unfinished - List.length ks;
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
          waiting = 0;
          unfinished = 0;
          finished = Queue.create ();
          wake_r;
          wake_w;
        }
      in
      ignore (watch r wake_r ~write:false (drain_finished p) : watch);
      for _ = 1 to r.threads do ignore (Thread.create (worker p) () : Thread.t) done;
      r.pool <- Some p;
      p

(* Dropped jobs stay in the queue until a thread skips them: when they
   fill it, they go at once, so the queue never holds more than
   [queue_limit] entries of either kind. Under [p.lock]. *)
let compact p =
  let live = Queue.create () in
  Queue.iter (fun j -> if j.state = Queued then Queue.push j live) p.jobs;
  Queue.clear p.jobs;
  Queue.transfer live p.jobs

let offload r job k =
  let p = pool r in
  Mutex.lock p.lock;
  if Queue.length p.jobs >= r.queue_limit then compact p;
  let accepted = p.waiting < r.queue_limit in
  let j =
    if not accepted then None
    else begin
      let finish () =
        let k =
          match job () with
          | () -> k
          | exception e -> fun () -> Log.error "offloaded job raised %s" (Printexc.to_string e); k ()
        in
        Mutex.lock p.lock;
        Queue.push k p.finished;
        Mutex.unlock p.lock;
        try ignore (Unix.write_substring p.wake_w "." 0 1 : int) with Unix.Unix_error _ -> ()
      in
      let j = { p; run = finish; state = Queued } in
      Queue.push j p.jobs;
      p.waiting <- p.waiting + 1;
      p.unfinished <- p.unfinished + 1;
      Condition.signal p.work;
      Some j
    end
  in
  Mutex.unlock p.lock;
  j

let drop j =
  let p = j.p in
  Mutex.lock p.lock;
  if j.state = Queued then begin
    j.state <- Dropped;
    j.run <- ignore;
    p.waiting <- p.waiting - 1;
    p.unfinished <- p.unfinished - 1
  end;
  Mutex.unlock p.lock

let queued r = match r.pool with None -> 0 | Some p -> p.waiting

(* {1 For the in-memory runtime} *)

let set_clock r f = r.clock <- f

let busy r =
  (match r.pool with
   | None -> false
   | Some p ->
       Mutex.lock p.lock;
       let n = p.unfinished in
       Mutex.unlock p.lock;
       n > 0)
  || Hashtbl.fold
       (fun fd ws acc ->
         acc
         || match r.pool with
            | Some p when fd = Syscall.fd_of_unix p.wake_r -> List.length ws > 1
            | _ -> ws <> [])
       r.watches false

let epfd r = r.epfd
