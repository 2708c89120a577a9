(* Structure first, bytes last: a head is generated as a record so that
   the structural mutations (duplicate a field, break a line ending, fold
   a value) are one-liners, then serialised, then possibly hit by byte-level
   mutations that know nothing of HTTP. *)

type field = { name : string; pre_colon : string; colon : string; value : string; eol : string }

type req = {
  lead : string;
  meth : string;
  sp1 : string;
  target : string;
  sp2 : string;
  version : string;
  rl_eol : string;
  fields : field list;
  end_eol : string;
  tail : string;
}

type case = { input : string; mutations : string list; split : int }

let int rs n = Random.State.int rs n
let bool rs = Random.State.bool rs
let chance rs p = Random.State.float rs 1.0 < p
let pick rs a = a.(int rs (Array.length a))

(* Weighted choice among thunks. *)
let weighted rs l =
  let total = List.fold_left (fun a (w, _) -> a + w) 0 l in
  let r = int rs total in
  let rec go r = function
    | [ (_, f) ] -> f ()
    | (w, f) :: tl -> if r < w then f () else go (r - w) tl
    | [] -> assert false
  in
  go r l

let string_of rs n f = String.init n (fun _ -> f rs)

let alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
let digits = "0123456789"
let hexdig = "0123456789abcdefABCDEF"
let tchar_extra = "!#$%&'*+-.^_`|~"
let tchars = alpha ^ digits ^ tchar_extra
let unreserved = alpha ^ digits ^ "-._~"
let sub_delims = "!$&'()*+,;="
let of_set set rs = set.[int rs (String.length set)]

let token rs n = string_of rs (max 1 n) (of_set tchars)

let pct rs = Printf.sprintf "%%%c%c" (of_set hexdig rs) (of_set hexdig rs)

(* pchar = unreserved / pct-encoded / sub-delims / ":" / "@" (RFC 3986) *)
let pchars rs n =
  String.concat ""
    (List.init n (fun _ ->
         if chance rs 0.05 then pct rs
         else String.make 1 (of_set (unreserved ^ sub_delims ^ ":@") rs)))

let path rs =
  let segs = List.init (int rs 5) (fun _ -> pchars rs (int rs 10)) in
  "/" ^ String.concat "/" segs

let query rs =
  if chance rs 0.3 then
    "?" ^ String.concat "" (List.init (int rs 20) (fun _ ->
        if chance rs 0.1 then String.make 1 (of_set "/?" rs) else pchars rs 1))
  else ""

let reg_name rs =
  let labels = List.init (1 + int rs 3) (fun _ ->
      String.concat "" (List.init (1 + int rs 8) (fun _ ->
          if chance rs 0.03 then pct rs else String.make 1 (of_set (alpha ^ digits ^ "-_~") rs))))
  in
  String.concat "." labels

let uri_host rs =
  weighted rs
    [ (8, fun () -> reg_name rs);
      (2, fun () -> Printf.sprintf "%d.%d.%d.%d" (int rs 256) (int rs 256) (int rs 256) (int rs 256));
      (1, fun () -> pick rs [| "[::1]"; "[2001:db8::7]"; "[fe80::1:2]" |]);
      (1, fun () -> "localhost") ]

let port rs = if chance rs 0.4 then ":" ^ string_of_int (int rs 65536) else ""

let common_methods = [| "GET"; "HEAD"; "POST"; "PUT"; "DELETE"; "OPTIONS"; "PATCH"; "TRACE"; "CONNECT" |]

(* Registered methods outside RFC 9110 that http_parser also knows. *)
let other_known_methods =
  [| "PROPFIND"; "PROPPATCH"; "MKCOL"; "COPY"; "MOVE"; "LOCK"; "UNLOCK"; "SEARCH"; "PURGE";
     "REPORT"; "MKACTIVITY"; "CHECKOUT"; "MERGE"; "M-SEARCH"; "NOTIFY"; "SUBSCRIBE";
     "UNSUBSCRIBE"; "MKCALENDAR"; "LINK"; "UNLINK"; "BIND"; "REBIND"; "UNBIND"; "ACL"; "SOURCE" |]

let meth rs =
  weighted rs
    [ (14, fun () -> pick rs common_methods);
      (3, fun () -> pick rs other_known_methods);
      (2, fun () -> token rs (1 + int rs 10)) ]

let target rs m =
  match m with
  | "CONNECT" -> uri_host rs ^ ":" ^ string_of_int (int rs 65536)
  | "OPTIONS" when chance rs 0.4 -> "*"
  | _ ->
    weighted rs
      [ (17, fun () -> path rs ^ query rs);
        (3, fun () ->
            let scheme =
              if chance rs 0.8 then pick rs [| "http"; "https"; "HTTP"; "ws" |]
              else String.make 1 (of_set alpha rs) ^ string_of rs (int rs 5) (of_set (alpha ^ digits ^ "+-."))
            in
            scheme ^ "://" ^ uri_host rs ^ port rs ^ (if chance rs 0.8 then path rs else "") ^ query rs) ]

(* field-vchar = VCHAR / obs-text; field-content may hold SP / HTAB inside. *)
let vchar rs =
  if chance rs 0.04 then Char.chr (0x80 + int rs 0x80) else Char.chr (0x21 + int rs 94)

let field_value rs =
  if chance rs 0.08 then ""
  else begin
    let n = 1 + (if chance rs 0.1 then int rs 300 else int rs 40) in
    let b = Bytes.init n (fun _ -> vchar rs) in
    for i = 1 to n - 2 do
      if chance rs 0.1 then Bytes.set b i (if chance rs 0.8 then ' ' else '\t')
    done;
    Bytes.to_string b
  end

let ows rs =
  weighted rs
    [ (10, fun () -> " "); (4, fun () -> ""); (1, fun () -> "\t");
      (1, fun () -> string_of rs (1 + int rs 4) (of_set " \t")) ]

let trailing_ows rs = if chance rs 0.15 then string_of rs (1 + int rs 3) (of_set " \t") else ""

let framing_names = [ "content-length"; "transfer-encoding"; "host"; "connection"; "proxy-connection" ]

let plain_names =
  [| "Accept"; "Accept-Encoding"; "Accept-Language"; "User-Agent"; "Cookie"; "Referer";
     "Cache-Control"; "Content-Type"; "Authorization"; "If-None-Match"; "If-Modified-Since";
     "Range"; "Origin"; "X-Forwarded-For"; "X-Request-ID"; "DNT"; "Sec-Fetch-Mode"; "Pragma";
     "Upgrade-Insecure-Requests"; "TE"; "Trailer"; "Via"; "Keep-Alive"; "Expect"; "Upgrade";
     "Content-Encoding"; "accept"; "user-agent"; "ACCEPT" |]

let plain_name rs =
  let rec go () =
    let n = if chance rs 0.7 then pick rs plain_names else token rs (1 + int rs 20) in
    if List.mem (String.lowercase_ascii n) framing_names then go () else n
  in
  go ()

let field name value rs =
  { name; pre_colon = ""; colon = ":"; value = ows rs ^ value ^ trailing_ows rs; eol = "\r\n" }

let random_case rs s =
  String.map (fun c -> if bool rs then Char.uppercase_ascii c else Char.lowercase_ascii c) s

let name_variant rs canonical =
  weighted rs
    [ (6, fun () -> canonical);
      (2, fun () -> String.lowercase_ascii canonical);
      (1, fun () -> String.uppercase_ascii canonical);
      (1, fun () -> random_case rs canonical) ]

let small_decimal rs =
  weighted rs
    [ (5, fun () -> string_of_int (int rs 100));
      (3, fun () -> string_of_int (int rs 100000));
      (1, fun () -> "0") ]

let connection_value rs =
  weighted rs
    [ (4, fun () -> name_variant rs "close");
      (4, fun () -> name_variant rs "keep-alive");
      (1, fun () -> "Upgrade");
      (1, fun () -> "keep-alive, Upgrade");
      (1, fun () -> "TE, close");
      (1, fun () -> "foo, bar") ]

let valid_req rs =
  let m = meth rs in
  let version = if chance rs 0.75 then "HTTP/1.1" else "HTTP/1.0" in
  let http11 = version = "HTTP/1.1" in
  let framing = ref [] in
  let add f = framing := f :: !framing in
  if http11 || chance rs 0.4 then
    add (field (name_variant rs "Host") (if chance rs 0.03 then "" else uri_host rs ^ port rs) rs);
  (match int rs 10 with
   | 0 | 1 | 2 -> add (field (name_variant rs "Content-Length") (small_decimal rs) rs)
   | 3 when http11 ->
     add (field (name_variant rs "Transfer-Encoding") (name_variant rs "chunked") rs)
   | _ -> ());
  if chance rs 0.3 then add (field (name_variant rs "Connection") (connection_value rs) rs);
  let n = weighted rs [ (6, fun () -> int rs 8); (3, fun () -> int rs 31) ] in
  let others = List.init n (fun _ -> field (plain_name rs) (field_value rs) rs) in
  (* Framing fields land at random places among the others. *)
  let fields =
    List.fold_left
      (fun acc f ->
        let k = int rs (List.length acc + 1) in
        List.filteri (fun i _ -> i < k) acc @ [ f ] @ List.filteri (fun i _ -> i >= k) acc)
      others !framing
  in
  let tail =
    weighted rs
      [ (6, fun () -> "");
        (2, fun () -> string_of rs (int rs 20) (fun rs -> Char.chr (int rs 256)));
        (1, fun () -> "GET / HTTP/1.1\r\nHost: x\r\n\r\n") ]
  in
  { lead = ""; meth = m; sp1 = " "; target = target rs m; sp2 = " "; version; rl_eol = "\r\n";
    fields; end_eol = "\r\n"; tail }

let serialise r =
  let b = Buffer.create 512 in
  Buffer.add_string b r.lead;
  Buffer.add_string b r.meth;
  Buffer.add_string b r.sp1;
  Buffer.add_string b r.target;
  Buffer.add_string b r.sp2;
  Buffer.add_string b r.version;
  Buffer.add_string b r.rl_eol;
  List.iter
    (fun f ->
      Buffer.add_string b f.name;
      Buffer.add_string b f.pre_colon;
      Buffer.add_string b f.colon;
      Buffer.add_string b f.value;
      Buffer.add_string b f.eol)
    r.fields;
  Buffer.add_string b r.end_eol;
  Buffer.add_string b r.tail;
  Buffer.contents b

let valid rs = serialise (valid_req rs)

(* --- Structural mutations --------------------------------------------- *)

let interesting_bytes = "\r\n\000\t :;,\"\\/#?%@\127\128\255\011\012\001"

let insert_at s i x = String.sub s 0 i ^ x ^ String.sub s i (String.length s - i)

let insert_somewhere rs s x = insert_at s (int rs (String.length s + 1)) x

let map_random_field rs r f =
  match r.fields with
  | [] -> r
  | l ->
    let k = int rs (List.length l) in
    { r with fields = List.mapi (fun i x -> if i = k then f x else x) l }

let add_field rs r f =
  let l = r.fields in
  let k = int rs (List.length l + 1) in
  { r with fields = List.filteri (fun i _ -> i < k) l @ [ f ] @ List.filteri (fun i _ -> i >= k) l }

let is_named n f = String.lowercase_ascii f.name = n

let content_length_weird rs =
  pick rs
    [| "+5"; "-5"; "-0"; "0x10"; "0X1f"; "1_000"; "5 5"; "5,5"; "5, 5"; "5,"; ",5"; "5;"; "";
       "\t7"; "007"; "0000000000000000000000001"; "999999999999999999"; "1000000000000000000";
       "9223372036854775807"; "9223372036854775808"; "18446744073709551615";
       "18446744073709551616"; "99999999999999999999"; "123456789012345678901234";
       "1e3"; "1.0"; "\2265"; "5\128"; "0"; "00"; "1073741824"; "1073741825"; "12 "; " 12" |]

let te_weird rs =
  pick rs
    [| "chunked"; "CHUNKED"; "Chunked"; "cHuNkEd"; "chunked "; "gzip, chunked"; "chunked, gzip";
       "chunked, chunked"; "gzip"; "identity"; "identity, chunked"; "chunked;q=1"; "chunked ;x=y";
       ","; ", chunked"; "chunked,"; "chunked,,"; ""; "chunk"; "chunkedx"; "x-chunked";
       "\"chunked\""; "chunked\tgzip"; "deflate,chunked"; "chunked, identity" |]

let connection_weird rs =
  pick rs
    [| "close"; "CLOSE"; "keep-alive"; "Keep-Alive"; "keep-alive, close"; "close, keep-alive";
       "upgrade"; "keepalive"; "close;"; " , close"; "clos"; "closed"; "keep-alive,"; "x, close, y";
       ""; "close close"; "close,close"; "cl, close"; "keep, keep-alive"; "c, close"; "up, close";
       "k, Keep-Alive"; "closer, close"; "T E, close"; "a b, keep-alive"; "x;y, close" |]

let host_weird rs =
  pick rs
    [| ""; "a b"; "a/b"; "a@b"; "a\"b"; "a<b"; "[::1"; "a:b:c"; "a%zz"; "a?b"; "a#b"; "\128";
       "a,b"; "a\\b"; "example.com:"; "example.com:99999"; ":80"; "a{b}" |]

let version_weird rs =
  pick rs
    [| "HTTP/1.0"; "HTTP/1.1"; "HTTP/1.2"; "HTTP/1.9"; "HTTP/2.0"; "HTTP/0.9"; "HTTP/3.0";
       "HTTP/9.9"; "http/1.1"; "HTTP/1.1 "; "HTTP/11"; "HTTP/1"; "HTTP/1.10"; "HTTP/01.1";
       "HTTP/1,1"; "HTTP /1.1"; "HTTPS/1.1"; "HTTP/a.b"; ""; "HTTP/1.1\t" |]

let method_weird rs =
  pick rs
    [| "get"; "Get"; "G ET"; "GE\tT"; "G\128T"; ""; "GET:"; "GET("; "\"GET\""; "M-SEARCH";
       "PRI"; "CONNECTX"; "HEADER"; "GETT"; "PURGE"; "QUERY"; "DESCRIBE"; "~!#"; "G\000T" |]

let target_weird rs m =
  pick rs
    [| "/a#frag"; "#"; "/\128"; "/\255x"; "/a b"; "*"; "*x"; "/*"; "example.com:80"; "a:b";
       "//x"; "http:"; "http://"; "1http://x/"; "+x:y"; "x:/y"; "/%00"; "/\127"; "/\001";
       "?a"; "/a?b#c"; "http://[::1]:80/"; "/a\"b"; "/a<b>"; "/a{b}|c^d`e\\"; "/" ^ String.make 9000 'a';
       (if m = "CONNECT" then "/" else "host:1") |]

let structural : (string * (Random.State.t -> req -> req)) list =
  [ ("dup_field", fun rs r ->
        match r.fields with [] -> r | l -> add_field rs r (List.nth l (int rs (List.length l))));
    ("conflicting_cl", fun rs r ->
        let r = add_field rs r (field "Content-Length" (small_decimal rs) rs) in
        add_field rs r (field "Content-Length" (small_decimal rs) rs));
    ("same_cl_twice", fun rs r ->
        let v = small_decimal rs in
        let r = add_field rs r (field "Content-Length" v rs) in
        add_field rs r (field (name_variant rs "Content-Length") v rs));
    ("cl_and_te", fun rs r ->
        let r = add_field rs r (field "Content-Length" (small_decimal rs) rs) in
        add_field rs r (field "Transfer-Encoding" (te_weird rs) rs));
    ("weird_cl", fun rs r -> add_field rs r (field (name_variant rs "Content-Length") (content_length_weird rs) rs));
    ("weird_te", fun rs r -> add_field rs r (field (name_variant rs "Transfer-Encoding") (te_weird rs) rs));
    ("two_te", fun rs r ->
        let r = add_field rs r (field "Transfer-Encoding" (te_weird rs) rs) in
        add_field rs r (field "Transfer-Encoding" (te_weird rs) rs));
    ("weird_connection", fun rs r ->
        add_field rs r (field (pick rs [| "Connection"; "connection"; "Proxy-Connection" |]) (connection_weird rs) rs));
    ("no_host", fun _ r -> { r with fields = List.filter (fun f -> not (is_named "host" f)) r.fields });
    ("dup_host", fun rs r -> add_field rs r (field "Host" (uri_host rs) rs));
    ("weird_host", fun rs r ->
        let r = { r with fields = List.filter (fun f -> not (is_named "host" f)) r.fields } in
        add_field rs r (field "Host" (host_weird rs) rs));
    ("space_before_colon", fun rs r ->
        map_random_field rs r (fun f -> { f with pre_colon = pick rs [| " "; "\t"; "  "; " \t" |] }));
    ("bare_lf", fun rs r ->
        if r.fields = [] || chance rs 0.2 then
          if bool rs then { r with rl_eol = "\n" } else { r with end_eol = "\n" }
        else map_random_field rs r (fun f -> { f with eol = "\n" }));
    ("bare_cr", fun rs r ->
        if r.fields = [] || chance rs 0.2 then
          if bool rs then { r with rl_eol = "\r" } else { r with end_eol = "\r" }
        else map_random_field rs r (fun f -> { f with eol = "\r" }));
    ("cr_or_lf_in_value", fun rs r ->
        map_random_field rs r (fun f -> { f with value = insert_somewhere rs f.value (pick rs [| "\r"; "\n"; "\r\r\n"; "\n\r" |]) }));
    ("obs_fold", fun rs r ->
        map_random_field rs r (fun f ->
            { f with value = insert_somewhere rs f.value (pick rs [| "\r\n "; "\r\n\t"; "\r\n  \t"; "\n " |]) }));
    ("fold_first_line", fun rs r ->
        { r with rl_eol = r.rl_eol ^ pick rs [| " "; "\t"; " x: y" |] });
    ("control_in_value", fun rs r ->
        map_random_field rs r (fun f -> { f with value = insert_somewhere rs f.value (String.make 1 (Char.chr (int rs 32))) }));
    ("del_in_value", fun rs r ->
        map_random_field rs r (fun f -> { f with value = insert_somewhere rs f.value "\127" }));
    ("bad_name_byte", fun rs r ->
        map_random_field rs r (fun f ->
            { f with name = insert_somewhere rs f.name (String.make 1 (pick rs
                [| '('; ')'; '<'; '>'; '@'; ','; ';'; '\\'; '"'; '/'; '['; ']'; '?'; '='; '{'; '}';
                   ' '; '\t'; '\000'; '\001'; '\127'; '\128'; '\255' |])) }));
    ("empty_name", fun rs r -> map_random_field rs r (fun f -> { f with name = "" }));
    ("no_colon", fun rs r ->
        let line = if bool rs then token rs (1 + int rs 8) else token rs 3 ^ " " ^ token rs 3 in
        add_field rs r { name = line; pre_colon = ""; colon = ""; value = ""; eol = "\r\n" });
    ("name_case", fun rs r -> map_random_field rs r (fun f -> { f with name = random_case rs f.name }));
    ("weird_version", fun rs r -> { r with version = version_weird rs });
    ("weird_method", fun rs r -> { r with meth = method_weird rs });
    ("weird_target", fun rs r -> { r with target = target_weird rs r.meth });
    ("weird_spaces", fun rs r ->
        if bool rs then { r with sp1 = pick rs [| "  "; "\t"; ""; " \t" |] }
        else { r with sp2 = pick rs [| "  "; "\t"; ""; " \t" |] });
    ("leading_empty_lines", fun rs r ->
        { r with lead = String.concat "" (List.init (1 + int rs 6) (fun _ -> pick rs [| "\r\n"; "\r\n"; "\n"; "\r" |])) });
    ("obs_text_everywhere", fun rs r ->
        map_random_field rs r (fun f -> { f with value = insert_somewhere rs f.value (String.make 1 (Char.chr (0x80 + int rs 128))) }));
    ("many_fields", fun rs r ->
        { r with fields = r.fields @ List.init (95 + int rs 10) (fun i -> field (Printf.sprintf "X-%d" i) "v" rs) });
    ("huge_value", fun rs r -> add_field rs r (field "X-Big" (String.make (20_000 + int rs 20_000) 'v') rs));
    ("framing_name_lookalike", fun rs r ->
        let base = pick rs [| "Transfer-Encoding"; "Content-Length"; "Connection"; "Host" |] in
        let name =
          match int rs 3 with
          | 0 -> base ^ String.make 1 (of_set tchars rs)
          | 1 -> String.make 1 (of_set tchars rs) ^ base
          | _ -> String.sub base 0 (String.length base - 1)
        in
        let value = pick rs [| "chunked"; "gzip"; "5"; "close"; "keep-alive"; "h" |] in
        let r = add_field rs r (field name value rs) in
        if bool rs then add_field rs r (field "Content-Length" (small_decimal rs) rs) else r);
    ("expect", fun rs r -> add_field rs r (field "Expect" (pick rs [| "100-continue"; "100-Continue"; "foo" |]) rs));
    ("truncate", fun rs r -> if bool rs then { r with end_eol = ""; tail = "" } else { r with tail = "" }) ]

(* --- Byte-level mutations ---------------------------------------------- *)

let random_byte rs = if bool rs then pick rs (Array.init (String.length interesting_bytes) (String.get interesting_bytes)) else Char.chr (int rs 256)

let bytewise : (string * (Random.State.t -> string -> string)) list =
  [ ("flip", fun rs s ->
        if s = "" then s
        else
          let b = Bytes.of_string s in
          let i = int rs (Bytes.length b) in
          Bytes.set b i (if bool rs then random_byte rs else Char.chr (Char.code s.[i] lxor (1 lsl int rs 8)));
          Bytes.to_string b);
    ("insert", fun rs s -> insert_somewhere rs s (String.make 1 (random_byte rs)));
    ("delete", fun rs s ->
        if s = "" then s
        else
          let i = int rs (String.length s) in
          let n = 1 + int rs (min 8 (String.length s - i)) in
          String.sub s 0 i ^ String.sub s (i + n) (String.length s - i - n));
    ("duplicate", fun rs s ->
        if s = "" then s
        else
          let i = int rs (String.length s) in
          let n = 1 + int rs (min 16 (String.length s - i)) in
          insert_at s i (String.sub s i n));
    ("cut", fun rs s -> String.sub s 0 (int rs (String.length s + 1))) ]

let case ~seed ~index =
  let rs = Random.State.make [| seed; index |] in
  let r = valid_req rs in
  let nstruct = weighted rs [ (3, fun () -> 0); (5, fun () -> 1); (2, fun () -> 2 + int rs 2) ] in
  let names = ref [] in
  let r = ref r in
  let heavy = [ "many_fields"; "huge_value" ] in
  let rec pick_structural () =
    let n, f = List.nth structural (int rs (List.length structural)) in
    (* The limit-probing mutations make inputs of tens of KiB that only
       test one thing: keep them to about 1 input in 200. *)
    if List.mem n heavy && not (chance rs 0.2) then pick_structural () else (n, f)
  in
  for _ = 1 to nstruct do
    let n, f = pick_structural () in
    names := n :: !names;
    r := f rs !r
  done;
  let s = ref (serialise !r) in
  let nbyte = weighted rs [ (7, fun () -> 0); (2, fun () -> 1); (1, fun () -> 2 + int rs 3) ] in
  for _ = 1 to nbyte do
    let n, f = List.nth bytewise (int rs (List.length bytewise)) in
    names := n :: !names;
    s := f rs !s
  done;
  { input = !s; mutations = List.rev !names; split = int rs (String.length !s + 1) }
