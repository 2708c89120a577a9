(* Each category is one deliberate difference between httpz and an oracle,
   argued with the RFC in DIFFERENCES.md (the test checks that both list
   the same ids). A category does not trust httpz's error name alone: its
   check re-reads the input with the lenient helpers below and matches
   only when the input really has the property the category is about.
   Where it can, it then repairs the input (rewrites it into the strict
   form the oracle would read the same way) and the comparison starts
   again on the repaired input, so a difference that stops httpz early
   cannot hide a second one behind it. *)

type pair = {
  oracle : Impl.name;
  input : string;
  hz : Impl.result;
  o : Impl.result;
  fields : string list;
}

type action =
  | Explained
  | Repair of string
  | Normalize of Impl.facts * Impl.facts

type category = { id : string; oracles : Impl.name list; check : pair -> action option }

(* --- A lenient reading of the head ------------------------------------ *)

let is_ows c = c = ' ' || c = '\t'
let lower = String.lowercase_ascii

(* Chunks of [s]: leading bytes up to the request-line (CR/LF only), the
   request-line with its terminator, each field line with its terminator
   (continuation lines are separate chunks), the empty line, the rest.
   Lines end at LF; a CR before it belongs to the terminator. *)
type chunks = { lead : string; rline : string; lines : string list; blank : string; rest : string }

let split s =
  let n = String.length s in
  let i = ref 0 in
  while !i < n && (s.[!i] = '\r' || s.[!i] = '\n') do incr i done;
  let lead = String.sub s 0 !i in
  let line_end from = match String.index_from_opt s from '\n' with Some j -> j + 1 | None -> n in
  let rl_end = line_end !i in
  let rline = String.sub s !i (rl_end - !i) in
  let pos = ref rl_end and lines = ref [] and blank = ref "" in
  let fin = ref false in
  while not !fin && !pos < n do
    let e = line_end !pos in
    let l = String.sub s !pos (e - !pos) in
    if l = "\r\n" || l = "\n" then (blank := l; pos := e; fin := true)
    else (lines := l :: !lines; pos := e)
  done;
  { lead; rline; lines = List.rev !lines; blank = !blank; rest = String.sub s !pos (n - !pos) }

let join c = c.lead ^ c.rline ^ String.concat "" c.lines ^ c.blank ^ c.rest

let strip_eol l =
  let n = String.length l in
  let n = if n > 0 && l.[n - 1] = '\n' then n - 1 else n in
  let n = if n > 0 && l.[n - 1] = '\r' then n - 1 else n in
  String.sub l 0 n

let eol_of l = let b = strip_eol l in String.sub l (String.length b) (String.length l - String.length b)

(* A field line's name (as sent) and raw value (after the colon), if it has
   a colon and does not start with whitespace. *)
let field l =
  let b = strip_eol l in
  if b = "" || is_ows b.[0] then None
  else
    match String.index_opt b ':' with
    | None -> None
    | Some k -> Some (String.sub b 0 k, String.sub b (k + 1) (String.length b - k - 1))

let fields s = List.filter_map field (split s).lines

let values s name =
  List.filter_map (fun (n, v) -> if lower (Impl.trim_ows n) = name then Some (Impl.trim_ows v) else None) (fields s)

(* Rewrite field lines: [f lowercased_name line] is the replacement (or
   [None] to drop the line). Lines without a name are kept. *)
let map_lines s f =
  let c = split s in
  let lines =
    List.filter_map
      (fun l -> match field l with Some (n, _) -> f (lower (Impl.trim_ows n)) l | None -> Some l)
      c.lines
  in
  join { c with lines }

let set_value l v = match field l with Some (n, _) -> n ^ ": " ^ v ^ eol_of l | None -> l

(* Request-line words, split at single SPs. *)
let rline_words s = String.split_on_char ' ' (strip_eol (split s).rline)

let version_of_rline s =
  match List.rev (rline_words s) with v :: _ -> v | [] -> ""

let list_elements v =
  List.filter (fun e -> e <> "") (List.map Impl.trim_ows (String.split_on_char ',' v))

let head_region s =
  let c = split s in
  c.lead ^ c.rline ^ String.concat "" c.lines ^ c.blank

let exists_char p s =
  let r = ref false in
  String.iteri (fun i c -> if p i c then r := true) s;
  !r

let bare_lf_in s = exists_char (fun i c -> c = '\n' && (i = 0 || s.[i - 1] <> '\r')) s
let bare_cr_in s = exists_char (fun i c -> c = '\r' && (i + 1 >= String.length s || s.[i + 1] <> '\n')) s

let is_digits v = v <> "" && String.for_all (fun c -> c >= '0' && c <= '9') v

let host_char c =
  match c with
  | 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' | '-' | '.' | '_' | '~' | '!' | '$' | '&' | '\''
  | '(' | ')' | '*' | '+' | ',' | ';' | '=' | '%' | ':' | '[' | ']' -> true
  | _ -> false

(* Host = uri-host [":" port] (RFC 3986 §3.2.2-3.2.3), written on strings,
   independently of the parser: an IP-literal in brackets (host chars but
   brackets inside), or a reg-name of unreserved / sub-delims / %HH; then
   optionally ':' and digits. *)
let valid_uri_host v =
  let n = String.length v in
  let is_hex c = match c with '0' .. '9' | 'a' .. 'f' | 'A' .. 'F' -> true | _ -> false in
  let port_ok i = i = n || (v.[i] = ':' && String.for_all (fun c -> c >= '0' && c <= '9') (String.sub v (i + 1) (n - i - 1))) in
  if n > 0 && v.[0] = '[' then
    match String.index_opt v ']' with
    | None -> false
    | Some j ->
      j > 1 && String.for_all (fun c -> host_char c && c <> '[' && c <> ']') (String.sub v 1 (j - 1))
      && port_ok (j + 1)
  else begin
    let rec reg i =
      if i = n || v.[i] = ':' then port_ok i
      else if v.[i] = '%' then i + 2 < n && is_hex v.[i + 1] && is_hex v.[i + 2] && reg (i + 3)
      else host_char v.[i] && v.[i] <> '[' && v.[i] <> ']' && reg (i + 1)
    in
    reg 0
  end

let tchar c =
  match c with
  | 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' | '!' | '#' | '$' | '%' | '&' | '\'' | '*' | '+' | '-'
  | '.' | '^' | '_' | '`' | '|' | '~' -> true
  | _ -> false

let is_ctl_in_value c = (c < ' ' && c <> '\t' && c <> '\r' && c <> '\n') || c = '\127'

(* --- Checks ------------------------------------------------------------ *)

let rejects_any p = match p.hz with Impl.Reject _ -> true | _ -> false
let rejects_with p reasons = match p.hz with Impl.Reject r -> List.mem r reasons | _ -> false
let oracle_accepts p = match p.o with Impl.Accept _ -> true | _ -> false
let both_accept p = match p.hz, p.o with Impl.Accept _, Impl.Accept _ -> true | _ -> false
let oracle_rejects_with p sub =
  match p.o with
  | Impl.Reject r ->
    let n = String.length sub and m = String.length r in
    let rec at i = i + n <= m && (String.sub r i n = sub || at (i + 1)) in
    at 0
  | _ -> false

let verdict_only p = p.fields = [ "verdict" ]
let when_ b a = if b then Some a else None
let repair_or_explain s s' = if s' = s then Explained else Repair s'

let limits = Impl.httpz_limits

let hp_methods =
  [ "DELETE"; "GET"; "HEAD"; "POST"; "PUT"; "CONNECT"; "OPTIONS"; "TRACE"; "COPY"; "LOCK"; "MKCOL";
    "MOVE"; "PROPFIND"; "PROPPATCH"; "SEARCH"; "UNLOCK"; "BIND"; "REBIND"; "UNBIND"; "ACL"; "REPORT";
    "MKACTIVITY"; "CHECKOUT"; "MERGE"; "M-SEARCH"; "NOTIFY"; "SUBSCRIBE"; "UNSUBSCRIBE"; "PATCH";
    "PURGE"; "MKCALENDAR"; "LINK"; "UNLINK"; "SOURCE" ]

let te_codings s = List.concat_map list_elements (values s "transfer-encoding")

let fold_repair s =
  let c = split s in
  (* A whitespace line right after the request-line folds onto nothing:
     there is no repair that keeps the rest meaningful. *)
  match c.lines with
  | l :: _ when is_ows l.[0] -> s
  | _ ->
    let rec merge acc = function
      | [] -> List.rev acc
      | l :: tl when l <> "" && is_ows l.[0] ->
        (match acc with
         | prev :: acc' ->
           let i = ref 0 in
           while !i < String.length l && is_ows l.[!i] do incr i done;
           let cont = String.sub l !i (String.length l - !i) in
           merge ((strip_eol prev ^ " " ^ cont) :: acc') tl
         | [] -> merge (l :: acc) tl)
      | l :: tl -> merge (l :: acc) tl
    in
    join { c with lines = merge [] c.lines }

let replace_bare_lf s =
  let b = Buffer.create (String.length s + 8) in
  String.iteri
    (fun i c -> if c = '\n' && (i = 0 || s.[i - 1] <> '\r') then Buffer.add_string b "\r\n" else Buffer.add_char b c)
    s;
  Buffer.contents b

(* scheme ":" with scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986 §3.1) *)
let scheme_colon t =
  match String.index_opt t ':' with
  | Some k when k > 0 ->
    (match t.[0] with 'a' .. 'z' | 'A' .. 'Z' -> true | _ -> false)
    && String.for_all
         (fun c -> match c with 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' | '+' | '-' | '.' -> true | _ -> false)
         (String.sub t 0 k)
  | _ -> false

let with_rline s words = let c = split s in join { c with rline = String.concat " " words ^ eol_of c.rline }

let all : category list =
  [ (* --- httpz refuses, the oracle reads it --- *)
    (* Repairs that leave the rest intact may fire whatever httpz's first
       error was: the comparison then starts again on the repaired input,
       where any other difference must be explained on its own. *)
    { id = "bare_lf"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          when_ (rejects_any p && bare_lf_in (head_region p.input))
            (repair_or_explain p.input (replace_bare_lf p.input))) };
    { id = "bare_cr"; oracles = [ Http_parser ];
      check = (fun p -> when_ (rejects_with p [ "bare_cr" ] && bare_cr_in (head_region p.input)) Explained) };
    { id = "obs_fold"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          let c = split p.input in
          if not (List.exists (fun l -> is_ows l.[0]) c.lines) then None
          else
            let s' = fold_repair p.input in
            if s' <> p.input && rejects_any p then Some (Repair s')
            else when_ (rejects_with p [ "obs_fold" ]) Explained) };
    { id = "leading_empty_lines"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          let c = split p.input in
          let newlines = List.length (String.split_on_char '\n' c.lead) - 1 in
          if c.lead = "" then None
          else if (match p.hz with Impl.Accept _ -> true | _ -> false)
               && oracle_rejects_with p "no request line received" then
            Some (Repair (join { c with lead = "" }))
          else
            when_ (rejects_with p [ "bad_request_line" ] && newlines > 4) (Repair (join { c with lead = "" }))) };
    { id = "host_required"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          let hosts = values p.input "host" in
          let v = version_of_rline p.input in
          (* h11 asks for Host in exactly HTTP/1.1, http_parser never. *)
          let oracle_skips =
            match p.oracle with
            | Impl.Http_parser -> true
            | _ -> String.length v = 8 && String.sub v 0 7 = "HTTP/1." && v.[7] >= '2' && v.[7] <= '9'
          in
          if not oracle_skips then None
          else if rejects_with p [ "missing_host" ] && hosts = [] && v <> "HTTP/1.0" then
            let c = split p.input in
            Some (Repair (join { c with lines = "Host: h\r\n" :: c.lines }))
          else if rejects_with p [ "duplicate_host" ] && List.length hosts >= 2 then
            let seen = ref false in
            Some (Repair (map_lines p.input (fun n l ->
                if n <> "host" then Some l else if !seen then None else (seen := true; Some l))))
          else None) };
    { id = "host_syntax"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          when_
            (rejects_with p [ "bad_host" ]
             && List.exists (fun v -> not (valid_uri_host v)) (values p.input "host"))
            (Repair (map_lines p.input (fun n l -> Some (if n = "host" then set_value l "h" else l))))) };
    { id = "limits"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          let c = split p.input in
          let head_len = String.length (head_region p.input) in
          when_
            ((rejects_with p [ "too_many_headers" ] && List.length c.lines > limits.max_headers)
             || (rejects_with p [ "head_too_large" ]
                 && (head_len > limits.max_head || String.length p.input >= limits.max_head))
             || (rejects_with p [ "target_too_long" ]
                 && String.length (strip_eol c.rline) > limits.max_target))
            Explained) };
    { id = "space_before_colon"; oracles = [ Http_parser ];
      check = (fun p ->
          let c = split p.input in
          let fix l =
            match field l with
            | Some (n, v) when n <> Impl.trim_ows n && String.for_all tchar (Impl.trim_ows n) && not (is_ows n.[0]) ->
              Impl.trim_ows n ^ ":" ^ v ^ eol_of l
            | _ -> l
          in
          let lines = List.map fix c.lines in
          when_ (rejects_with p [ "space_before_colon" ] && lines <> c.lines) (Repair (join { c with lines }))) };
    { id = "control_in_value"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          let c = split p.input in
          let body l = match field l with Some (_, v) -> v | None -> strip_eol l in
          when_
            (rejects_with p [ "bad_header_value" ]
             && List.exists (fun l -> exists_char (fun _ c -> is_ctl_in_value c) (body l)) c.lines)
            (Repair
               (join { c with lines = List.map (String.map (fun ch -> if is_ctl_in_value ch then '_' else ch)) c.lines }))) };
    { id = "chunked_not_final"; oracles = [ Http_parser ];
      check = (fun p ->
          let codings = List.map (fun e -> lower e) (te_codings p.input) in
          let chunked = List.filter (( = ) "chunked") codings in
          let last_not_chunked = match List.rev codings with x :: _ -> x <> "chunked" | [] -> true in
          when_
            (rejects_with p [ "chunked_not_final" ]
             && (last_not_chunked || List.length chunked > 1
                 || List.exists (fun e -> not (tchar e.[0])) (te_codings p.input)
                 || List.exists (fun v -> list_elements v = []) (values p.input "transfer-encoding")))
            Explained) };
    { id = "unsupported_transfer_coding"; oracles = [ Http_parser ];
      check = (fun p ->
          when_
            (rejects_with p [ "unsupported_transfer_coding" ]
             && List.exists (fun e -> lower e <> "chunked") (te_codings p.input))
            (let first = ref true in
             Repair (map_lines p.input (fun n l ->
                 if n <> "transfer-encoding" then Some l
                 else if !first then (first := false; Some (set_value l "chunked")) else None)))) };
    { id = "transfer_encoding_http10"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          when_
            (rejects_with p [ "transfer_encoding_http10" ] && values p.input "transfer-encoding" <> []
             && version_of_rline p.input = "HTTP/1.0")
            (Repair (map_lines p.input (fun n l -> if n = "transfer-encoding" then None else Some l)))) };
    { id = "length_and_chunked"; oracles = [ H11 ];
      check = (fun p ->
          when_
            (rejects_with p [ "length_and_chunked" ] && values p.input "transfer-encoding" <> []
             && values p.input "content-length" <> [])
            (Repair (map_lines p.input (fun n l -> if n = "content-length" then None else Some l)))) };
    { id = "content_length_list"; oracles = [ H11 ];
      check = (fun p ->
          let is_list v =
            match list_elements v with
            | x :: (_ :: _ as tl) -> is_digits x && List.for_all (( = ) x) tl
            | _ -> false
          in
          when_
            (rejects_with p [ "bad_content_length" ] && List.exists is_list (values p.input "content-length"))
            (Repair (map_lines p.input (fun n l ->
                 match field l with
                 | Some (_, v) when n = "content-length" && is_list (Impl.trim_ows v) ->
                   Some (set_value l (List.hd (list_elements v)))
                 | _ -> Some l)))) };
    { id = "content_length_digits"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          when_
            (rejects_with p [ "bad_content_length" ]
             && List.exists (fun v -> is_digits v && String.length v > 18) (values p.input "content-length"))
            Explained) };
    { id = "unsupported_version"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          let v = version_of_rline p.input in
          when_
            (rejects_with p [ "unsupported_version" ] && String.length v = 8
             && String.sub v 0 5 = "HTTP/" && v.[5] <> '1')
            Explained) };
    { id = "http09_request_line"; oracles = [ Http_parser ];
      check = (fun p ->
          when_ (rejects_any p && match p.o with Impl.Accept { version = (0, 9); _ } -> true | _ -> false)
            Explained) };
    { id = "request_line_whitespace"; oracles = [ Http_parser ];
      check = (fun p ->
          let rl = strip_eol (split p.input).rline in
          let words = List.filter (( <> ) "") (String.split_on_char ' ' rl) in
          when_
            (rejects_with p [ "bad_version"; "bad_request_line"; "bad_target" ]
             && List.length words = 3 && String.concat " " words <> rl)
            (Repair (with_rline p.input words))) };
    { id = "version_token_unchecked"; oracles = [ Http_parser ];
      check = (fun p ->
          (* http_parser's non-strict build skips the checks of the bytes
             "HTTP/", so "HTTX/1.1" or "H TP/1.1" pass as versions. *)
          let rl = strip_eol (split p.input).rline in
          let n = String.length rl in
          let digit c = c >= '0' && c <= '9' in
          when_
            (rejects_with p [ "bad_version"; "bad_target"; "bad_request_line" ] && oracle_accepts p && n >= 8
             && (let v = String.sub rl (n - 8) 8 in
                 String.sub v 0 5 <> "HTTP/" && digit v.[5] && v.[6] = '.' && digit v.[7]))
            Explained) };
    { id = "fragment_in_target"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          match rline_words p.input with
          | [ m; t; v ] when rejects_with p [ "bad_target" ] && String.contains t '#' ->
            Some (repair_or_explain p.input (with_rline p.input [ m; String.sub t 0 (String.index t '#'); v ]))
          | _ -> None) };
    { id = "control_in_target"; oracles = [ Http_parser ];
      check = (fun p ->
          let c = split p.input in
          let rl = strip_eol c.rline in
          match String.index_opt rl ' ', String.rindex_opt rl ' ' with
          | Some i, Some j when j > i && rejects_with p [ "bad_target" ] ->
            let t = String.sub rl (i + 1) (j - i - 1) in
            if not (exists_char (fun _ c -> c < ' ' || c = '\127') t) then None
            else
              let b = Buffer.create 64 in
              String.iter
                (fun c -> if c < ' ' || c = '\127' then Buffer.add_string b (Printf.sprintf "%%%02X" (Char.code c)) else Buffer.add_char b c)
                t;
              Some (Repair (join { c with rline = String.sub rl 0 (i + 1) ^ Buffer.contents b ^ String.sub rl j (String.length rl - j) ^ eol_of c.rline }))
          | _ -> None) };
    { id = "target_form"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          match rline_words p.input with
          | [ m; t; _ ] when rejects_with p [ "bad_target" ] && t <> "" && not (String.contains t '#') ->
            let ok_form =
              match m with
              | "CONNECT" ->
                (* authority-form = uri-host ":" port *)
                (match String.rindex_opt t ':' with
                 | Some k when k > 0 ->
                   String.for_all host_char t
                   && String.for_all (fun c -> c >= '0' && c <= '9') (String.sub t (k + 1) (String.length t - k - 1))
                 | _ -> false)
              | "OPTIONS" when t.[0] = '*' -> t = "*"
              | _ -> t.[0] = '/' || scheme_colon t
            in
            when_ (not ok_form) Explained
          | _ -> None) };
    { id = "absolute_authority"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          match rline_words p.input with
          | [ m; t; v ] when rejects_with p [ "bad_target" ] && scheme_colon t -> (
              let k = String.index t ':' in
              let n = String.length t in
              if k + 3 > n || String.sub t (k + 1) 2 <> "//" then None
              else
                let e = ref (k + 3) in
                while !e < n && t.[!e] <> '/' && t.[!e] <> '?' do incr e done;
                let a = String.sub t (k + 3) (!e - k - 3) in
                if a <> "" && (String.contains a '@' || not (valid_uri_host a)) then
                  Some (Repair (with_rline p.input [ m; String.sub t 0 (k + 3) ^ "h" ^ String.sub t !e (n - !e); v ]))
                else None)
          | _ -> None) };
    (* --- the oracle refuses, httpz reads it --- *)
    { id = "method_not_in_http_parser"; oracles = [ Http_parser ];
      check = (fun p ->
          match p.hz with
          | Impl.Accept f when oracle_rejects_with p "HPE_INVALID_METHOD" && not (List.mem f.meth hp_methods) ->
            (match rline_words p.input with
             | [ _; t; v ] ->
               let m = if t = "*" then "OPTIONS" else if t.[0] = '/' || String.contains t '/' then "GET" else "CONNECT" in
               Some (Repair (with_rline p.input [ m; t; v ]))
             | _ -> Some Explained)
          | _ -> None) };
    { id = "transfer_coding_list"; oracles = [ H11 ];
      check = (fun p ->
          match p.hz with
          | Impl.Accept { chunked = true; _ } when oracle_rejects_with p "Only Transfer-Encoding: chunked" ->
            let vs = values p.input "transfer-encoding" in
            when_
              (List.length vs = 1 && List.map lower (list_elements (List.hd vs)) = [ "chunked" ]
               && lower (List.hd vs) <> "chunked")
              (Repair (map_lines p.input (fun n l -> Some (if n = "transfer-encoding" then set_value l "chunked" else l))))
          | _ -> None) };
    { id = "obs_text_in_target"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          match p.hz, rline_words p.input with
          | Impl.Accept _, [ m; t; v ] when not (oracle_accepts p) && exists_char (fun _ c -> c >= '\128') t ->
            let b = Buffer.create 64 in
            String.iter (fun c -> if c >= '\128' then Buffer.add_string b (Printf.sprintf "%%%02X" (Char.code c)) else Buffer.add_char b c) t;
            Some (Repair (with_rline p.input [ m; Buffer.contents b; v ]))
          | _ -> None) };
    { id = "absolute_form"; oracles = [ Http_parser ];
      check = (fun p ->
          (* httpz's parser checks only the shape scheme ":" of an
             absolute-form target and leaves the rest to Httpz.Target;
             http_parser's URL parser has its own, narrower idea of a URL. *)
          match p.hz, rline_words p.input with
          | Impl.Accept _, [ _; t; _ ] when oracle_rejects_with p "HPE_INVALID_URL" -> when_ (scheme_colon t) Explained
          | _ -> None) };
    { id = "htab_in_framing_value"; oracles = [ Http_parser ];
      check = (fun p ->
          let framing = [ "content-length"; "transfer-encoding"; "connection"; "proxy-connection" ] in
          let has_tab =
            List.exists (fun (n, v) -> List.mem (lower (Impl.trim_ows n)) framing && String.contains v '\t')
              (fields p.input)
          in
          let shows =
            (match p.hz with Impl.Accept _ -> true | _ -> false)
            && (oracle_rejects_with p "HPE_INVALID_CONTENT_LENGTH"
                || oracle_rejects_with p "HPE_INVALID_TRANSFER_ENCODING"
                || List.exists (fun f -> List.mem f [ "keep_alive"; "chunked"; "content_length" ]) p.fields)
          in
          when_ (has_tab && shows)
            (Repair (map_lines p.input (fun n l ->
                 Some (if List.mem n framing then String.map (fun c -> if c = '\t' then ' ' else c) l else l))))) };
    { id = "content_length_same_value"; oracles = [ H11 ];
      check = (fun p ->
          let cls = values p.input "content-length" in
          match p.hz, cls with
          | Impl.Accept _, first :: (_ :: _ as rest)
            when oracle_rejects_with p "conflicting Content-Length" && List.for_all is_digits cls
                 && List.exists (fun v -> v <> first) rest ->
            let seen = ref false in
            Some (Repair (map_lines p.input (fun n l ->
                if n <> "content-length" then Some l else if !seen then None else (seen := true; Some l))))
          | _ -> None) };
    { id = "empty_list_elements"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          let lists = [ "transfer-encoding"; "connection" ] in
          let has_empty v =
            let v = Impl.trim_ows v in
            v <> "" && List.exists (fun e -> Impl.trim_ows e = "") (String.split_on_char ',' v)
          in
          let affected =
            List.exists (fun (n, v) -> List.mem (lower (Impl.trim_ows n)) lists && has_empty v) (fields p.input)
          in
          let shows =
            (match p.hz with Impl.Accept _ -> true | _ -> false)
            && (oracle_rejects_with p "Only Transfer-Encoding: chunked"
                || List.exists (fun f -> List.mem f [ "keep_alive"; "chunked" ]) p.fields)
          in
          when_ (affected && shows)
            (Repair (map_lines p.input (fun n l ->
                 match field l with
                 | Some (_, v) when List.mem n lists && has_empty v -> Some (set_value l (String.concat ", " (list_elements v)))
                 | _ -> Some l)))) };
    { id = "close_beats_keep_alive"; oracles = [ Http_parser ];
      check = (fun p ->
          match p.hz, p.o with
          | Impl.Accept a, Impl.Accept b when List.mem "keep_alive" p.fields && (not a.keep_alive) && b.keep_alive ->
            let conn = List.map lower (List.concat_map list_elements (values p.input "connection")) in
            when_ (List.mem "close" conn && List.mem "keep-alive" conn) (Normalize (a, { b with keep_alive = false }))
          | _ -> None) };
    { id = "space_in_field_name"; oracles = [ Http_parser ];
      check = (fun p ->
          let c = split p.input in
          let fix l =
            match field l with
            | Some (n, v) when String.contains (Impl.trim_ows n) ' ' && not (is_ows n.[0]) ->
              String.concat "" (String.split_on_char ' ' n) ^ ":" ^ v ^ eol_of l
            | _ -> l
          in
          let lines = List.map fix c.lines in
          when_ (rejects_with p [ "bad_header_name" ] && lines <> c.lines) (Repair (join { c with lines }))) };
    { id = "te_name_prefix"; oracles = [ Http_parser ];
      check = (fun p ->
          let lookalike n =
            let n = lower (Impl.trim_ows n) in
            String.length n > 17 && String.sub n 0 17 = "transfer-encoding"
          in
          when_
            ((match p.hz with Impl.Accept _ -> true | _ -> false)
             && List.exists (fun (n, _) -> lookalike n) (fields p.input)
             && (oracle_rejects_with p "HPE_UNEXPECTED_CONTENT_LENGTH"
                 || oracle_rejects_with p "HPE_INVALID_TRANSFER_ENCODING"
                 || List.exists (fun f -> List.mem f [ "chunked"; "content_length"; "keep_alive" ]) p.fields))
            (Repair (map_lines p.input (fun n l -> if lookalike n then None else Some l)))) };
    { id = "connection_matcher"; oracles = [ Http_parser ];
      check = (fun p ->
          (* http_parser's Connection matcher loses its place after an
             element that is a proper prefix of an option it knows, or that
             is not a token, and misses the option that follows. *)
          let options = [ "close"; "keep-alive"; "upgrade" ] in
          let confusing e =
            let e = lower e in
            (not (String.for_all tchar e))
            || List.exists (fun o -> String.length e < String.length o && String.sub o 0 (String.length e) = e) options
          in
          let elements = List.concat_map list_elements (values p.input "connection") in
          when_
            (List.mem "keep_alive" p.fields && List.exists confusing elements)
            (Repair (map_lines p.input (fun n l ->
                 match field l with
                 | Some (_, v) when n = "connection" ->
                   Some (set_value l (String.concat ", " (List.filter (fun e -> not (confusing e)) (list_elements v))))
                 | _ -> Some l)))) };
    { id = "proxy_connection"; oracles = [ Http_parser ];
      check = (fun p ->
          when_
            (List.mem "keep_alive" p.fields && values p.input "proxy-connection" <> [])
            (Repair (map_lines p.input (fun n l -> if n = "proxy-connection" then None else Some l)))) };
    { id = "repeated_content_length"; oracles = [ Http_parser ];
      check = (fun p ->
          let cls = values p.input "content-length" in
          when_
            ((match p.hz with Impl.Accept _ -> true | _ -> false)
             && oracle_rejects_with p "HPE_UNEXPECTED_CONTENT_LENGTH" && List.length cls >= 2)
            (let seen = ref false in
             Repair (map_lines p.input (fun n l ->
                 if n <> "content-length" then Some l else if !seen then None else (seen := true; Some l))))) };
    (* --- both read it, the facts differ --- *)
    { id = "http10_keep_alive"; oracles = [ H11 ];
      check = (fun p ->
          match p.hz, p.o with
          | Impl.Accept a, Impl.Accept b
            when List.mem "keep_alive" p.fields && a.version = (1, 0) && a.keep_alive && not b.keep_alive ->
            let conn = List.concat_map list_elements (values p.input "connection") in
            when_ (List.exists (fun e -> lower e = "keep-alive") conn) (Normalize (a, { b with keep_alive = true }))
          | _ -> None) };
    { id = "minor_version"; oracles = [ H11; Http_parser ];
      check = (fun p ->
          match p.hz, p.o with
          | Impl.Accept a, Impl.Accept b
            when List.mem "version" p.fields && a.version = (1, 1) && fst b.version = 1 && snd b.version > 1 ->
            Some (Normalize (a, { b with version = (1, 1) }))
          | _ -> None) };
    { id = "h11_lowercases_transfer_encoding"; oracles = [ H11 ];
      check = (fun p ->
          match p.hz, p.o with
          | Impl.Accept a, Impl.Accept b when List.mem "headers" p.fields ->
            let headers =
              List.map (fun (n, v) -> if lower n = "transfer-encoding" then (n, lower v) else (n, v)) a.headers
            in
            when_ (headers <> a.headers) (Normalize ({ a with headers }, b))
          | _ -> None) };
    { id = "h11_merges_content_length"; oracles = [ H11 ];
      check = (fun p ->
          match p.hz, p.o with
          | Impl.Accept a, Impl.Accept b when List.mem "headers" p.fields ->
            let seen = ref false in
            let headers =
              List.filter
                (fun (n, _) -> if lower n <> "content-length" then true else if !seen then false else (seen := true; true))
                a.headers
            in
            when_ (headers <> a.headers) (Normalize ({ a with headers }, b))
          | _ -> None) };
  ]

let _ = both_accept
let _ = verdict_only
