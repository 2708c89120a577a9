(* The reactor's timer heap against a model (order, cancellation, nothing
   kept once cancelled) and its offload pool (the queue bound, dropped jobs
   never run), driven by hand: no server runs. *)

open Httpz_sys
open Httpz_server

let epfd = Syscall.epoll_create ()
let reactor ?(threads = 4) ?(queue = 0) () = Reactor.create ~epfd ~base_token:1000 ~threads ~queue

(* {1 Timers} *)

type op = Add of int | Cancel of int | Fire of int

(* Deadlines are whole seconds from now (the test runs in far less), so the
   model orders timers by (seconds, creation). *)
let gen_ops =
  QCheck.Gen.(
    list_size (int_range 1 300)
      (frequency
         [ (5, map (fun s -> Add s) (int_range 1 50));
           (3, map (fun i -> Cancel i) (int_bound 1000));
           (1, map (fun s -> Fire s) (int_range 0 55)) ]))

let print_op = function
  | Add s -> Printf.sprintf "Add %d" s
  | Cancel i -> Printf.sprintf "Cancel %d" i
  | Fire s -> Printf.sprintf "Fire %d" s

let heap_agrees ops =
  let r = reactor () in
  let t0 = Syscall.clock_monotonic_ns () in
  let fired = ref [] in
  let timers = ref [||] in
  (* model: (seconds, id) of the live timers *)
  let live = ref [] in
  let ok = ref true in
  List.iter
    (fun op ->
      (match op with
      | Add s ->
          let id = Array.length !timers in
          let tm = Reactor.after r (float s) (fun () -> fired := id :: !fired) in
          timers := Array.append !timers [| tm |];
          live := (s, id) :: !live
      | Cancel i ->
          let n = Array.length !timers in
          if n > 0 then begin
            let id = i mod n in
            Reactor.cancel !timers.(id);
            live := List.filter (fun (_, x) -> x <> id) !live
          end
      | Fire s ->
          fired := [];
          Reactor.run_timers r ~now_ns:(t0 + (s * 1_000_000_000) + 500_000_000);
          let due, later = List.partition (fun (d, _) -> d <= s) !live in
          let want = List.map snd (List.sort compare due) in
          if List.rev !fired <> want then ok := false;
          live := later);
      if Reactor.timers r <> List.length !live then ok := false)
    ops;
  !ok

let model =
  QCheck.Test.make ~count:300 ~name:"timers fire in deadline order; cancelled ones never, and leave the heap"
    (QCheck.make ~print:(QCheck.Print.list print_op) gen_ops)
    heap_agrees

let zero_is_next_turn () =
  let r = reactor () in
  let hit = ref 0 in
  ignore (Reactor.after r 5. (fun () -> incr hit) : Reactor.timer);
  ignore (Reactor.after r 0. (fun () -> incr hit) : Reactor.timer);
  Alcotest.(check bool) "due at once" true (Reactor.next_timer_ns r <= Syscall.clock_monotonic_ns ());
  Reactor.run_timers r ~now_ns:1;
  Alcotest.(check int) "the zero one fired on the next turn, whatever the clock" 1 !hit

(* A burst of timers, all cancelled behind one long live timer: the heap
   keeps the live one only, and its closures go (a weak pointer sees the
   closure's captured block collected). *)
let cancelled_behind_live () =
  let r = reactor () in
  ignore (Reactor.after r 1000. ignore : Reactor.timer);
  let weak = Weak.create 1 in
  let tms =
    List.init 10_000 (fun i ->
        let payload = Bytes.make 64 (Char.chr (i land 255)) in
        if i = 0 then Weak.set weak 0 (Some payload);
        Reactor.after r 2000. (fun () -> ignore (Bytes.length payload)))
  in
  Alcotest.(check int) "10,001 live" 10_001 (Reactor.timers r);
  List.iter Reactor.cancel tms;
  Alcotest.(check int) "one left" 1 (Reactor.timers r);
  Gc.full_major ();
  Alcotest.(check bool) "a cancelled timer's closure is collected" false (Weak.check weak 0);
  Reactor.cancel (List.hd tms);
  Alcotest.(check int) "cancel is idempotent" 1 (Reactor.timers r)

(* {1 The offload pool} *)

(* Runs the loop's side until [cond] or 5 s: the pool's wake-up pipe,
   the reactor's only watch, registered in [epfd]. *)
let drive r cond =
  let evs = Syscall.events_create 8 in
  let deadline = Unix.gettimeofday () +. 5. in
  while (not (cond ())) && Unix.gettimeofday () < deadline do
    let n = Syscall.epoll_wait epfd evs 8 50 in
    for i = 0 to n - 1 do
      Reactor.dispatch r (Syscall.event_token evs i) (Syscall.event_mask evs i)
    done
  done

let pool_bound_and_drop () =
  let r = reactor ~threads:1 ~queue:2 () in
  let gate = Mutex.create () in
  Mutex.lock gate;
  let ran = ref [] and done_ = ref [] in
  let m = Mutex.create () in
  let job name () =
    Mutex.lock gate;
    Mutex.unlock gate;
    Mutex.lock m;
    ran := name :: !ran;
    Mutex.unlock m
  in
  let k name () = done_ := name :: !done_ in
  let submit name = Reactor.offload r (job name) (k name) in
  let a = submit "a" in
  (* Until the thread has taken [a], it counts as queued. *)
  let deadline = Unix.gettimeofday () +. 5. in
  while Reactor.queued r > 0 && Unix.gettimeofday () < deadline do Thread.delay 0.001 done;
  Alcotest.(check int) "the thread took the first job" 0 (Reactor.queued r);
  let b = submit "b" and c = submit "c" in
  Alcotest.(check bool) "two wait" true (a <> None && b <> None && c <> None);
  Alcotest.(check bool) "a third is refused" true (submit "d" = None);
  (match b with Some j -> Reactor.drop j; Reactor.drop j | None -> ());
  Alcotest.(check int) "a dropped job stops counting at once" 1 (Reactor.queued r);
  Alcotest.(check bool) "so another is accepted" true (submit "e" <> None);
  Alcotest.(check bool) "and the queue is full again" true (submit "f" = None);
  Mutex.unlock gate;
  drive r (fun () -> List.length !done_ = 3);
  Alcotest.(check (list string)) "ran: not the dropped one" [ "a"; "c"; "e" ] (List.sort compare !ran);
  Alcotest.(check (list string)) "continuations: not the dropped one" [ "a"; "c"; "e" ]
    (List.sort compare !done_);
  (match a with Some j -> Reactor.drop j | None -> ());
  Alcotest.(check int) "dropping a finished job changes nothing" 0 (Reactor.queued r)

let () =
  Alcotest.run "reactor"
    [ ( "timers",
        [ Httpz_test_support.qcheck model;
          Alcotest.test_case "a zero wait is the next turn" `Quick zero_is_next_turn;
          Alcotest.test_case "cancelled timers behind a live one keep nothing" `Quick cancelled_behind_live ] );
      ("offload", [ Alcotest.test_case "bounded queue, dropped jobs never run" `Quick pool_bound_and_drop ]) ]
