open Httpz

let find = ref (fun (_ : Bigstring.t) (_ : Span.t) -> 0)
let no_host = ref 0

let set_sites ~names ~find:f ~no_host:n =
  find := f;
  no_host := n;
  Totals.set_sites names

let protocol (c : Slot.t) req ~parsed =
  if c.mode = Slot.H2_stream then 2
  else if not parsed then 1
  else match Request.version req with Version.Http_1_0 -> 0 | Http_1_1 -> 1 | Http_2 -> 2

let column (c : Slot.t) req ~parsed =
  if parsed && Request.has_host req then Totals.site_column (!find c.rbuf (Request.host req))
  else Totals.site_column !no_host

(* The body's bytes that left, as the access log counts them: all of it
   when the response completed, else what the socket took after the head
   (HTTP/2: [sent] is body bytes only, H2_exchange.account). *)
let body_sent (c : Slot.t) ~complete =
  if complete then c.resp_bytes
  else
    let n = if c.mode = Slot.H2_stream then c.sent else c.sent - c.head_len in
    if n <= 0 then 0 else if n > c.resp_bytes then c.resp_bytes else n

let response t row (c : Slot.t) ~parsed ~complete ~status_listener =
  if row >= 0 then
    let body = body_sent c ~complete and req = Slot.req c in
    Totals.exchange t row
      ~col:(if status_listener then Totals.col_status else column c req ~parsed)
      ~protocol:(protocol c req ~parsed) ~status:(Status.code c.status)
      ~bytes:(if c.mode = Slot.H2_stream then body else c.sent) ~body
      ~ns:(if c.started_ns > 0 then Syscall.clock_monotonic_ns () - c.started_ns else 0)
