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

type t = {
  capacity : int;
  id : int array;
  state : int array;
  recv_window : int array;
  recv_unacked : int array;
  recv_held : int array;
  send_window : int array;
  priority : int array;
  content_length : int array;
  data_received : int array;
  response : int array;
  out_kind : int array;
  out_buf : Bigstring.t array;
  out_off : int array;
  out_len : int array;
  out_end : bool array;
  mutable active : int;
  mutable last_found : int;
}

let no_buffer = Bigstring.create 0

let create capacity =
  if capacity < 1 then invalid_arg "Httpz.H2_stream.create";
  let ints () = Array.make capacity 0 in
  {
    capacity;
    id = ints ();
    state = ints ();
    recv_window = ints ();
    recv_unacked = ints ();
    recv_held = ints ();
    send_window = ints ();
    priority = Array.make capacity (H2_priority.default :> int);
    content_length = Array.make capacity (-1);
    data_received = ints ();
    response = ints ();
    out_kind = ints ();
    out_buf = Array.make capacity no_buffer;
    out_off = ints ();
    out_len = ints ();
    out_end = Array.make capacity false;
    active = 0;
    last_found = 0;
  }

let free t slot =
  if t.id.(slot) <> 0 then begin
    t.id.(slot) <- 0;
    t.state.(slot) <- 0;
    t.out_kind.(slot) <- out_none;
    t.out_buf.(slot) <- no_buffer;
    t.out_len.(slot) <- 0;
    t.out_end.(slot) <- false;
    t.active <- t.active - 1
  end

let clear t =
  for slot = 0 to t.capacity - 1 do
    free t slot
  done;
  t.active <- 0

let search t id =
  let last = t.last_found in
  if Array.unsafe_get t.id last = id then last
  else begin
    let r = ref (-1) and i = ref 0 in
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
  if slot >= 0 then begin
    t.id.(slot) <- id;
    t.state.(slot) <- open_;
    t.recv_window.(slot) <- recv_window;
    t.recv_unacked.(slot) <- 0;
    t.recv_held.(slot) <- 0;
    t.send_window.(slot) <- send_window;
    t.priority.(slot) <- (H2_priority.default :> int);
    t.content_length.(slot) <- -1;
    t.data_received.(slot) <- 0;
    t.response.(slot) <- 0;
    t.out_kind.(slot) <- out_none;
    t.out_off.(slot) <- 0;
    t.out_len.(slot) <- 0;
    t.out_end.(slot) <- false;
    t.active <- t.active + 1;
    t.last_found <- slot
  end;
  slot

let wants_to_send t slot =
  t.id.(slot) <> 0
  && t.out_kind.(slot) <> out_none
  && ((t.out_len.(slot) > 0 && t.send_window.(slot) > 0)
     || (t.out_len.(slot) = 0 && t.out_end.(slot)))
