(* H2_stream's slot table against a model: every stream in use is found in
   its slot, every other id is not, whatever the hint collisions. *)

open Httpz
module S = H2_stream

let displaced_by_scan (t : S.t) =
  let n = ref 0 in
  for slot = 0 to t.capacity - 1 do
    let id = t.id.(slot) in
    if id > 0 && t.hint.((id lsr 1) land (Array.length t.hint - 1)) <> slot then incr n
  done;
  !n

let sending_by_scan (t : S.t) =
  let n = ref 0 in
  for slot = 0 to t.capacity - 1 do
    if t.out_kind.(slot) <> S.out_none then incr n
  done;
  !n

(* Operations: [`Open] the next odd id, [`Free k] the k-th stream in use
   (modulo how many), [`Find id] any id, [`Queue (k, kind)] a body piece
   (or none) on the k-th stream in use. A free slot, and so a slot just
   opened, has nothing queued; [sending] counts the slots that have. *)
let run_ops max ops =
  let t = S.create max in
  let live = Hashtbl.create 16 in
  let next = ref 1 in
  let ok = ref true in
  let check_all () =
    if displaced_by_scan t <> t.displaced then ok := false;
    if sending_by_scan t <> t.sending then ok := false;
    for slot = 0 to t.capacity - 1 do
      if t.id.(slot) = 0 && (t.out_kind.(slot) <> S.out_none || t.out_len.(slot) <> 0 || t.out_end.(slot)) then
        ok := false
    done;
    for slot = 0 to min t.in_use_below t.capacity - 1 do
      if t.id.(slot) = 0 then ok := false
    done;
    Hashtbl.iter (fun id slot -> if S.find t id <> slot then ok := false) live
  in
  List.iter
    (fun op ->
      (match op with
      | `Open stride ->
          (* Ids rise by a stride that makes them share hint entries. *)
          let id = !next in
          next := !next + (2 * stride);
          (* The slot taken: the one freed last if free, else the last one
             found if free, else the lowest free one (else a new one). *)
          let want =
            let h = t.free_hint and l = t.last_found in
            if h >= 0 && h < t.capacity && t.id.(h) = 0 then h
            else if t.id.(l) = 0 then l
            else begin
              let r = ref (-1) in
              for slot = t.capacity - 1 downto 0 do
                if t.id.(slot) = 0 then r := slot
              done;
              if !r < 0 && t.capacity < t.max_capacity then t.capacity else !r
            end
          in
          let slot = S.open_slot t ~id ~recv_window:0 ~send_window:0 in
          if slot <> want then ok := false;
          if slot >= 0 && (t.out_kind.(slot) <> S.out_none || t.out_len.(slot) <> 0) then ok := false;
          if slot >= 0 then Hashtbl.replace live id slot
          else if Hashtbl.length live < max then ok := false
      | `Free k ->
          let n = Hashtbl.length live in
          if n > 0 then begin
            let ids = List.sort compare (Hashtbl.fold (fun id _ acc -> id :: acc) live []) in
            let id = List.nth ids (k mod n) in
            S.free t (Hashtbl.find live id);
            Hashtbl.remove live id
          end
      | `Queue (k, kind) ->
          let n = Hashtbl.length live in
          if n > 0 then begin
            let ids = List.sort compare (Hashtbl.fold (fun id _ acc -> id :: acc) live []) in
            let slot = Hashtbl.find live (List.nth ids (k mod n)) in
            S.set_out_kind t slot kind;
            t.out_len.(slot) <- (if kind = S.out_none then 0 else 7);
            t.out_end.(slot) <- kind <> S.out_none
          end
      | `Find id ->
          let want = try Hashtbl.find live id with Not_found -> -1 in
          if S.find t id <> want then ok := false);
      check_all ())
    ops;
  !ok

let op =
  QCheck2.Gen.(
    frequency
      [
        (4, map (fun s -> `Open s) (oneofl [ 1; 1; 4; 8; 16; 32 ]));
        (3, map (fun k -> `Free k) (int_bound 64));
        (2, map (fun id -> `Find id) (int_range (-2) 300));
        ( 3,
          map2
            (fun k kind -> `Queue (k, kind))
            (int_bound 64)
            (oneofl [ S.out_none; S.out_buffer; S.out_external; S.out_stable ]) );
      ])

let model =
  QCheck2.Test.make ~count:500 ~name:"slots found, absent ids not, under hint collisions"
    QCheck2.Gen.(pair (int_range 1 40) (list_size (int_range 0 200) op))
    (fun (max, ops) -> run_ops max ops)

(* Streams whose ids share one hint entry: the displaced ones are still
   found (by the scan), and once they are gone an absent id is -1 at once. *)
let test_collisions () =
  let t = S.create 64 in
  let size = Array.length t.hint in
  (* ids 1, 1 + 2*size, 1 + 4*size share the entry of stream 1 *)
  let a = S.open_slot t ~id:1 ~recv_window:0 ~send_window:0 in
  let b = S.open_slot t ~id:(1 + (2 * size)) ~recv_window:0 ~send_window:0 in
  Alcotest.(check int) "one displaced" 1 t.displaced;
  Alcotest.(check int) "the displaced one still found" a (S.find t 1);
  Alcotest.(check int) "the newer one found" b (S.find t (1 + (2 * size)));
  Alcotest.(check int) "an absent id" (-1) (S.find t (1 + (4 * size)));
  S.free t a;
  Alcotest.(check int) "none displaced" 0 t.displaced;
  Alcotest.(check int) "closed: not found" (-1) (S.find t 1);
  Alcotest.(check int) "the other still found" b (S.find t (1 + (2 * size)));
  S.free t b;
  Alcotest.(check int) "nothing displaced after all closed" 0 t.displaced;
  Alcotest.(check int) "empty: not found" (-1) (S.find t (1 + (2 * size)))

(* Growing rebuilds the hints: the count follows. *)
let test_grow () =
  let t = S.create 128 in
  for i = 0 to 99 do
    ignore (S.open_slot t ~id:((2 * i * 7) + 1) ~recv_window:0 ~send_window:0 : int)
  done;
  Alcotest.(check int) "count after growing" (displaced_by_scan t) t.displaced;
  for i = 0 to 99 do
    Alcotest.(check bool) "found" true (S.find t ((2 * i * 7) + 1) >= 0)
  done;
  S.set_out_kind t 5 S.out_stable;
  S.set_out_kind t 6 S.out_buffer;
  Alcotest.(check int) "two sending" 2 t.sending;
  S.clear t;
  Alcotest.(check int) "cleared" 0 t.displaced;
  Alcotest.(check int) "none sending" 0 t.sending

(* Looking up a closed stream (as each ending exchange does) allocates
   nothing. *)
let absent_lookup () =
  let t = S.create 16 in
  for i = 0 to 9 do
    ignore (S.open_slot t ~id:((2 * i) + 1) ~recv_window:0 ~send_window:0 : int)
  done;
  S.free t 3;
  fun () -> if S.find t 7 <> -1 || S.find t 9 < 0 then failwith "find"

(* A body queued and sent, as each response does: the count follows,
   nothing allocated. *)
let out_kind_toggle () =
  let t = S.create 16 in
  let slot = S.open_slot t ~id:1 ~recv_window:0 ~send_window:0 in
  fun () ->
    S.set_out_kind t slot S.out_stable;
    if t.sending <> 1 then failwith "sending";
    S.set_out_kind t slot S.out_none;
    if t.sending <> 0 then failwith "sending"

let tests =
  [
    Httpz_test_support.qcheck model;
    Alcotest.test_case "hint collisions" `Quick test_collisions;
    Alcotest.test_case "growing" `Quick test_grow;
  ]
