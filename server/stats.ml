open Httpz

let path = "/__httpz/stats"
let text_path = "/__httpz/stats.txt"
let metrics_path = "/__httpz/metrics"

type format = Json | Text | Prometheus

(* The token is a secret: compared in time that depends on its length
   only, not on how many leading bytes match. *)
let same_secret buf ~off ~len secret =
  let n = String.length secret in
  len = n
  &&
  let d = ref 0 in
  for i = 0 to n - 1 do
    d := !d lor (Char.code (Bigstring.unsafe_get buf (off + i)) lxor Char.code (String.unsafe_get secret i))
  done;
  !d = 0

(* [1]: the JSON report asked for, [2]: the text one, [3]: Prometheus's,
   [0]: none. [bare]: the status listener's own, where [/metrics] (what
   Prometheus asks by default) is the last too. *)
let asked ?(bare = false) c =
  let req = Ctx.request c and buf = Ctx.buffer c in
  match Request.meth req with
  | Meth.Get | Meth.Head ->
      let target = Request.target req in
      if Span.equal buf target path then 1
      else if Span.equal buf target text_path then 2
      else if Span.equal buf target metrics_path || (bare && Span.equal buf target "/metrics") then 3
      else 0
  | _ -> 0

let format_of = function 1 -> Json | 2 -> Text | _ -> Prometheus

(* [value] is [scheme], in any case (auth schemes are case-insensitive,
   RFC 9110 section 11.1), one or more spaces, then [token] exactly. *)
let authorized ~scheme ~token c =
  let req = Ctx.request c in
  let i = Request.find req Header_name.Authorization in
  i >= 0
  &&
  let v = Request.header_value req i and buf = Ctx.buffer c in
  let off = Span.off v and len = Span.len v and sl = String.length scheme in
  if sl = 0 then same_secret buf ~off ~len token
  else
    len > sl
    && Bigstring.equal_caseless buf ~off ~len:sl scheme
    && Bigstring.unsafe_get buf (off + sl) = ' '
    &&
    let p = ref (off + sl) in
    while !p < off + len && Bigstring.unsafe_get buf !p = ' ' do incr p done;
    same_secret buf ~off:!p ~len:(off + len - !p) token

let answer c k body =
  Ctx.start c Status.Ok;
  Ctx.header c Header_name.Content_type
    (match k with
     | 1 -> "application/json"
     | 2 -> "text/plain; charset=utf-8"
     | _ -> "text/plain; version=0.0.4; charset=utf-8");
  Ctx.header c Header_name.Cache_control "no-store";
  Ctx.body_string c body

(* Made once per worker: from then on it has a reader of the totals, and
   requests are timed for their histogram. *)
let handler ~credentials ~report ~app =
  Totals.time_requests ();
  let scheme, token =
    match String.index_opt credentials ' ' with
    | Some i -> (String.sub credentials 0 i, String.trim (String.sub credentials i (String.length credentials - i)))
    | None -> ("", credentials)
  in
  fun c ->
    match asked c with
    | 0 -> app c
    | k -> if authorized ~scheme ~token c then answer c k (report (format_of k)) else app c

let status_handler ~report =
  Totals.time_requests ();
  fun c ->
  match asked ~bare:true c with
  | 0 ->
      Ctx.start c Status.Not_found;
      Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
      Ctx.body_string c "404 Not Found: this listener answers /__httpz/stats, /__httpz/stats.txt and /metrics only\n"
  | k -> answer c k (report (format_of k))
