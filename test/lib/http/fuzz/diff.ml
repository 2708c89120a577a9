module R = Httpz.Request

type oracle = { name : Impl.name; run : string -> Impl.result }

type finding = { kind : string; input : string; detail : string }

(* --- Self-consistency of httpz ----------------------------------------- *)

(* Every span of a Complete parse lies inside the head. *)
let spans_inside t ~off =
  let hl = R.head_length t in
  let ok sp =
    let o = Httpz.Span.off sp and l = Httpz.Span.len sp in
    o >= off && l >= 0 && o + l <= off + hl
  in
  let r = ref (ok (R.meth_span t) && ok (R.target t)) in
  for i = 0 to R.header_count t - 1 do
    r := !r && ok (R.header_name_span t i) && ok (R.header_value t i)
  done;
  !r

exception Self of string * string

let parse_at t s ~off ~garbage =
  let len = String.length s in
  let buf = Impl.embed ~off ~garbage s in
  let st =
    try R.parse t buf ~off ~len
    with e -> raise (Self ("self:raised", Printexc.to_string e))
  in
  if st = R.Complete then begin
    if R.head_length t > len then raise (Self ("self:bounds", "head_length > len"));
    if not (spans_inside t ~off) then raise (Self ("self:bounds", "a span lies outside the head"))
  end;
  Impl.of_httpz t buf st

let garbage_fills = [| '\n'; 'A'; '\r'; ' '; ':'; '\000' |]

let content_too_large_ok reference =
  match reference with
  | Impl.Accept { content_length = Some n; _ } ->
    String.length n > 10 || int_of_string n > R.default_limits.max_content_length
  | Impl.Reject "missing_host" -> true
  | _ -> false

let pp = Impl.pp_result

let httpz_checked ~split s =
  let findings = ref [] in
  let add kind detail = findings := { kind; input = s; detail } :: !findings in
  let t = R.create ~limits:Impl.httpz_limits () in
  let reference =
    try parse_at t s ~off:7 ~garbage:'\n'
    with Self (k, m) -> add k m; Impl.Reject "harness: self-check failed"
  in
  let expect ?(note = "") what r =
    if r <> reference then
      add what (Format.asprintf "@[<v>%sgot:@,%a@,one-shot parse:@,%a@]" note pp r pp reference)
  in
  (try
     (* Other offsets and fillers: a reader that looks outside
        off..off+len sees different bytes and answers differently. *)
     Array.iteri
       (fun i garbage ->
         if i > 0 then
           expect ~note:(Printf.sprintf "garbage %C around the input: " garbage) "self:garbage" (parse_at t s ~off:(i * 5) ~garbage))
       garbage_fills;
     (* A prefix, then the whole input, then the input closed by an empty
        line, all on one state and one buffer: resuming must not change
        the answer. A resumed parse only re-parses once an empty line may
        have arrived (request.mli, "Incremental input"), so it may still
        say Partial where a one-shot parse already saw an error; the
        closed input must then end in that same error. *)
     let closed = s ^ "\r\n\r\n" in
     let t2 = R.create ~limits:Impl.httpz_limits () in
     let buf = Impl.embed ~off:3 ~garbage:'\r' closed in
     let step len =
       let st = try R.parse t2 buf ~off:3 ~len with e -> raise (Self ("self:raised", Printexc.to_string e)) in
       if st = R.Complete && not (spans_inside t2 ~off:3) then
         raise (Self ("self:bounds", "a span lies outside the head (incremental)"));
       Impl.of_httpz t2 buf st
     in
     let r1 = step split in
     (match r1 with
      | Impl.Partial -> ()
      | Impl.Reject _ -> expect ~note:(Printf.sprintf "prefix of %d bytes: " split) "self:prefix rejected" r1
      | Impl.Accept f ->
        (match reference with
         | Impl.Accept g when f = g -> ()
         | _ -> add "self:prefix accepted" (Format.asprintf "@[<v>prefix %d:@,%a@,whole:@,%a@]" split pp r1 pp reference)));
     let r2 = step (String.length s) in
     let resumed = r1 = Impl.Partial in
     (match r2, reference with
      | Impl.Partial, Impl.Reject _ when resumed ->
        let r3 = step (String.length closed) in
        let closed_ref = parse_at (R.create ~limits:Impl.httpz_limits ()) closed ~off:0 ~garbage:'y' in
        if r3 <> closed_ref then
          add "self:resumed"
            (Format.asprintf "@[<v>after Partial prefixes of %d and %d bytes, closed input:@,%a@,one-shot parse of the closed input:@,%a@]"
               split (String.length s) pp r3 pp closed_ref)
      | Impl.Reject "head_too_large", Impl.Reject _
        when resumed && String.length s >= Impl.httpz_limits.max_head -> ()
        (* A resumed parse of an over-long head stops at the limit without
           re-parsing (it only re-parses when an empty line may have
           arrived), so it names the limit where a one-shot parse names
           the first bad byte: both refuse. *)
      | _ ->
        expect ~note:(Printf.sprintf "after a prefix of %d bytes: " split) "self:resumed" r2);
     (* The default limits differ only by max_content_length. *)
     let td = R.create () in
     let rd = parse_at td s ~off:0 ~garbage:'x' in
     if rd <> reference && not (rd = Impl.Reject "content_too_large" && content_too_large_ok reference) then
       add "self:default limits" (Format.asprintf "@[<v>default limits:@,%a@,harness limits:@,%a@]" pp rd pp reference)
   with Self (k, m) -> add k m);
  (reference, List.rev !findings)

(* --- Comparison with an oracle ------------------------------------------ *)

open Categories

let close_head s = s ^ "\r\n\r\n"

type report = { hits : string list; findings : finding list }

let max_depth = 12

let undocumented oracle ~via p =
  let name = Impl.name_to_string oracle.name in
  let detail =
    Format.asprintf "@[<v>%s%s differ on %s@,httpz: %a@,%s: %a@]"
      (if via = [] then "" else "(" ^ String.concat ", then " via ^ ") ")
      name (String.concat ", " p.fields) pp p.hz name pp p.o
  in
  { hits = []; findings = [ { kind = "undocumented:" ^ name; input = p.input; detail } ] }

let nothing = { hits = []; findings = [] }

(* Every difference must be explained by a category (recorded in [hits])
   or becomes a finding; [via] says which repairs led to the input at
   hand, for the report. *)
let rec compare ?(depth = 0) ?(via = []) (oracle : oracle) ~hz_run input hz o =
  let again ~why s' hz' o' =
    if depth >= max_depth then
      { hits = [];
        findings = [ { kind = "harness:repair loop"; input = s'; detail = String.concat ", then " (via @ [ why ]) } ] }
    else compare ~depth:(depth + 1) ~via:(via @ [ why ]) oracle ~hz_run s' hz' o'
  in
  let differ fields =
    let p = { oracle = oracle.name; input; hz; o; fields } in
    explain ~via oracle ~used:[] p (fun ~why s' -> again ~why s' (hz_run s') (oracle.run s'))
  in
  match hz, o with
  | Impl.Reject _, Impl.Reject _ | Impl.Partial, Impl.Partial -> nothing
  | Impl.Reject _, Impl.Partial ->
    (* The oracle has not looked yet (h11 waits for the empty line): show
       it the end of a head and ask again. *)
    let s' = close_head input in
    (match oracle.run s' with
     | Impl.Reject _ | Impl.Partial -> nothing
     | o' -> again ~why:"closed with CRLFCRLF" s' (hz_run s') o')
  | Impl.Partial, Impl.Reject _ ->
    let s' = close_head input in
    (match hz_run s' with
     | Impl.Reject _ | Impl.Partial -> nothing
     | hz' -> again ~why:"closed with CRLFCRLF" s' hz' (oracle.run s'))
  | Impl.Accept a, Impl.Accept b ->
    (match Impl.facts_diff a b with [] -> nothing | fields -> differ fields)
  | _ -> differ [ "verdict" ]

(* The first category that explains [p]: explained outright, or after a
   repair (compared again from scratch), or after normalizing the facts
   (the remaining differences must be explained by other categories). *)
and explain ~via oracle ~used p again =
  let name = Impl.name_to_string oracle.name in
  let found =
    List.find_map
      (fun c ->
        if List.mem oracle.name c.oracles && not (List.mem c.id used) then
          Option.map (fun a -> (c, a)) (c.check p)
        else None)
      Categories.all
  in
  match found with
  | None -> undocumented oracle ~via p
  | Some (c, a) ->
    let add r = { r with hits = (name ^ ":" ^ c.id) :: r.hits } in
    (match a with
     | Explained -> add nothing
     | Repair s' when s' = p.input -> add nothing
     | Repair s' -> add (again ~why:("repaired for " ^ c.id) s')
     | Normalize (a', b') ->
       (match Impl.facts_diff a' b' with
        | [] -> add nothing
        | fields ->
          add (explain ~via oracle ~used:(c.id :: used) { p with hz = Impl.Accept a'; o = Impl.Accept b'; fields } again)))
