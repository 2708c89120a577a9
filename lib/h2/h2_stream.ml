let open_ = 1
let half_closed_remote = 2
let half_closed_local = 3

let state_name = function
  | 1 -> "open"
  | 2 -> "half-closed (remote)"
  | 3 -> "half-closed (local)"
  | _ -> "closed"

let out_none = 0
let out_buffer = 1
let out_external = 2
let out_stable = 3

type t = {
  mutable capacity : int;
  max_capacity : int;
  mutable id : int array;
  mutable state : int array;
  mutable recv_window : int array;
  mutable recv_unacked : int array;
  mutable recv_held : int array;
  mutable send_window : int array;
  mutable priority : int array;
  mutable content_length : int array;
  mutable data_received : int array;
  mutable data_sent : int array;
  mutable response : int array;
  mutable out_kind : int array;
  mutable sending : int;
  mutable out_buf : Bigstring.t array;
  mutable out_off : int array;
  mutable out_len : int array;
  mutable out_end : bool array;
  mutable active : int;
  mutable last_found : int;
  mutable free_hint : int;  (** a slot freed last, likely still free *)
  mutable in_use_below : int;  (** every slot below it is in use *)
  mutable hint : int array;
      (** by stream id ([id lsr 1], masked to its power-of-two length): the
          slot that stream was opened in, or a stale guess *)
  mutable displaced : int;
      (** streams in use whose [hint] entry names another slot (a later
          stream with the same entry took it); while [0], a stream the hint
          does not lead to has no slot *)
}

let no_buffer = Bigstring.create 0

let initial_capacity = 4

let arrays t capacity =
  let grow a fill =
    let b = Array.make capacity fill in
    Array.blit a 0 b 0 (Array.length a);
    b
  in
  t.id <- grow t.id 0;
  t.state <- grow t.state 0;
  t.recv_window <- grow t.recv_window 0;
  t.recv_unacked <- grow t.recv_unacked 0;
  t.recv_held <- grow t.recv_held 0;
  t.send_window <- grow t.send_window 0;
  t.priority <- grow t.priority (H2_priority.default :> int);
  t.content_length <- grow t.content_length (-1);
  t.data_received <- grow t.data_received 0;
  t.data_sent <- grow t.data_sent 0;
  t.response <- grow t.response 0;
  t.out_kind <- grow t.out_kind 0;
  t.out_buf <- grow t.out_buf no_buffer;
  t.out_off <- grow t.out_off 0;
  t.out_len <- grow t.out_len 0;
  t.out_end <- grow t.out_end false;
  (* Room for twice the slots, so that open stream ids (odd, rising)
     seldom share an entry. *)
  let n = ref 8 in
  while !n < 2 * capacity do n := 2 * !n done;
  let hint = Array.make !n (-1) in
  for slot = 0 to t.capacity - 1 do
    let id = Array.unsafe_get t.id slot in
    if id > 0 then hint.((id lsr 1) land (!n - 1)) <- slot
  done;
  let displaced = ref 0 in
  for slot = 0 to t.capacity - 1 do
    let id = Array.unsafe_get t.id slot in
    if id > 0 && hint.((id lsr 1) land (!n - 1)) <> slot then incr displaced
  done;
  t.hint <- hint;
  t.displaced <- !displaced;
  t.capacity <- capacity

let create max_capacity =
  if max_capacity < 1 then invalid_arg "Httpz.H2_stream.create";
  let t =
    {
      capacity = 0;
      max_capacity;
      id = [||];
      state = [||];
      recv_window = [||];
      recv_unacked = [||];
      recv_held = [||];
      send_window = [||];
      priority = [||];
      content_length = [||];
      data_received = [||];
      data_sent = [||];
      response = [||];
      out_kind = [||];
      sending = 0;
      out_buf = [||];
      out_off = [||];
      out_len = [||];
      out_end = [||];
      active = 0;
      last_found = 0;
      free_hint = 0;
      in_use_below = 0;
      hint = [||];
      displaced = 0;
    }
  in
  arrays t (if max_capacity < initial_capacity then max_capacity else initial_capacity);
  t

(* Doubles the table (up to [max_capacity]): the only allocation, once per
   new peak of concurrent streams in the table's life. *)
let grow t =
  let c = 2 * t.capacity in
  arrays t (if c > t.max_capacity then t.max_capacity else c)

let[@inline] hint_index t id = (id lsr 1) land (Array.length t.hint - 1)

(* Every per-slot array is [capacity] long: one checked access to [id]
   vouches for the slot in all of them. *)
let[@inline] set (a : int array) slot (v : int) = Array.unsafe_set a slot v
let[@inline] get (a : int array) slot = Array.unsafe_get a slot
let[@inline] set_flag (a : bool array) slot (v : bool) = Array.unsafe_set a slot v
let[@inline] get_flag (a : bool array) slot = Array.unsafe_get a slot

let set_out_kind t slot kind =
  let was = get t.out_kind slot in
  if was <> kind then begin
    if was = out_none then t.sending <- t.sending + 1
    else if kind = out_none then t.sending <- t.sending - 1;
    set t.out_kind slot kind
  end

let free t slot =
  let id = t.id.(slot) in
  if id <> 0 then begin
    if get t.hint (hint_index t id) <> slot then t.displaced <- t.displaced - 1;
    t.free_hint <- slot;
    if slot < t.in_use_below then t.in_use_below <- slot;
    set t.id slot 0;
    set t.state slot 0;
    set_out_kind t slot out_none;
    set t.out_len slot 0;
    set_flag t.out_end slot false;
    t.active <- t.active - 1
  end

let clear t =
  for slot = 0 to t.capacity - 1 do
    free t slot;
    if Array.unsafe_get t.out_buf slot != no_buffer then Array.unsafe_set t.out_buf slot no_buffer
  done;
  t.active <- 0;
  t.sending <- 0;
  t.displaced <- 0;
  t.in_use_below <- 0

(* A stream's slot: its hint, the last one found, or a scan; no scan for a
   stream id while every stream in use is where its hint says (a closed
   stream's id is looked up for each one that ends). A free slot ([id =
   0]): the one freed last, else the lowest, looked for from
   [in_use_below] on. *)
let search t id =
  let last = t.last_found in
  let h = if id > 0 then Array.unsafe_get t.hint (hint_index t id) else t.free_hint in
  if h >= 0 && h < t.capacity && Array.unsafe_get t.id h = id then h
  else if Array.unsafe_get t.id last = id then last
  else if id > 0 && t.displaced = 0 then -1
  else begin
    let r = ref (-1) and i = ref (if id = 0 then t.in_use_below else 0) in
    while !r < 0 && !i < t.capacity do
      if Array.unsafe_get t.id !i = id then r := !i;
      incr i
    done;
    if !r >= 0 then t.last_found <- !r;
    !r
  end

let find t id = if id <= 0 then -1 else search t id

let open_slot t ~id ~recv_window ~send_window =
  let slot = search t 0 in
  let slot =
    if slot >= 0 || t.capacity >= t.max_capacity then slot
    else begin
      let free = t.capacity in
      grow t;
      free
    end
  in
  if slot >= 0 then begin
    t.id.(slot) <- id;
    set t.state slot open_;
    set t.recv_window slot recv_window;
    set t.recv_unacked slot 0;
    set t.recv_held slot 0;
    set t.send_window slot send_window;
    set t.priority slot (H2_priority.default :> int);
    set t.content_length slot (-1);
    set t.data_received slot 0;
    set t.data_sent slot 0;
    set t.response slot 0;
    (* [out_kind], [out_len] and [out_end] of a free slot are as [free]
       (or the arrays' growth) left them: nothing queued. *)
    set t.out_off slot 0;
    t.active <- t.active + 1;
    t.last_found <- slot;
    if slot = t.in_use_below then t.in_use_below <- slot + 1;
    let k = hint_index t id in
    let e = Array.unsafe_get t.hint k in
    (* A stream in use whose entry this is loses it. *)
    if e >= 0 && e < t.capacity && e <> slot then begin
      let other = Array.unsafe_get t.id e in
      if other > 0 && hint_index t other = k then t.displaced <- t.displaced + 1
    end;
    Array.unsafe_set t.hint k slot
  end;
  slot

let wants_to_send t slot =
  t.id.(slot) <> 0
  && get t.out_kind slot <> out_none
  &&
  let left = get t.out_len slot in
  (left > 0 && get t.send_window slot > 0) || (left = 0 && get_flag t.out_end slot)
