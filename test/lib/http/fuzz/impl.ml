type facts = {
  meth : string;
  target : string;
  version : int * int;
  headers : (string * string) list;
  content_length : string option;
  chunked : bool;
  keep_alive : bool;
  head_length : int;
}

type result = Accept of facts | Partial | Reject of string
type name = Httpz | H11 | Http_parser

let name_to_string = function
  | Httpz -> "httpz" | H11 -> "h11" | Http_parser -> "http_parser"

let canonical_decimal s =
  let n = String.length s in
  let i = ref 0 in
  while !i < n - 1 && s.[!i] = '0' do incr i done;
  String.sub s !i (n - !i)

let is_ows c = c = ' ' || c = '\t'

let trim_ows s =
  let i = ref 0 and j = ref (String.length s) in
  while !i < !j && is_ows s.[!i] do incr i done;
  while !j > !i && is_ows s.[!j - 1] do decr j done;
  String.sub s !i (!j - !i)

let escape s =
  let b = Buffer.create (String.length s * 2) in
  String.iter
    (fun c ->
      match c with
      | '\r' -> Buffer.add_string b "\\r"
      | '\n' -> Buffer.add_string b "\\n"
      | '\t' -> Buffer.add_string b "\\t"
      | '\\' -> Buffer.add_string b "\\\\"
      | '"' -> Buffer.add_string b "\\\""
      | ' ' .. '~' -> Buffer.add_char b c
      | c -> Buffer.add_string b (Printf.sprintf "\\x%02x" (Char.code c)))
    s;
  Buffer.contents b

let unescape s =
  let b = Buffer.create (String.length s) in
  let n = String.length s in
  let i = ref 0 in
  while !i < n do
    (match s.[!i] with
     | '\\' when !i + 1 < n ->
       incr i;
       (match s.[!i] with
        | 'r' -> Buffer.add_char b '\r'
        | 'n' -> Buffer.add_char b '\n'
        | 't' -> Buffer.add_char b '\t'
        | '\\' | '"' as c -> Buffer.add_char b c
        | 'x' when !i + 2 < n ->
          Buffer.add_char b (Char.chr (int_of_string ("0x" ^ String.sub s (!i + 1) 2)));
          i := !i + 2
        | _ -> invalid_arg "Impl.unescape")
     | '\\' -> invalid_arg "Impl.unescape"
     | c -> Buffer.add_char b c);
    incr i
  done;
  Buffer.contents b

let pp_facts ppf f =
  Format.fprintf ppf
    "@[<v>method %S target \"%s\" version %d.%d@,content-length %s chunked %b keep-alive %b head %d@,%a@]"
    f.meth (escape f.target) (fst f.version) (snd f.version)
    (match f.content_length with None -> "-" | Some s -> s)
    f.chunked f.keep_alive f.head_length
    (Format.pp_print_list (fun ppf (n, v) -> Format.fprintf ppf "  \"%s\": \"%s\"" (escape n) (escape v)))
    f.headers

let pp_result ppf = function
  | Accept f -> Format.fprintf ppf "@[<v 2>accept@,%a@]" pp_facts f
  | Partial -> Format.fprintf ppf "partial"
  | Reject why -> Format.fprintf ppf "reject (%s)" why

let facts_diff a b =
  let d = ref [] in
  let chk name ok = if not ok then d := name :: !d in
  chk "head_length" (a.head_length = b.head_length);
  chk "keep_alive" (a.keep_alive = b.keep_alive);
  chk "chunked" (a.chunked = b.chunked);
  chk "content_length" (a.content_length = b.content_length);
  chk "headers" (a.headers = b.headers);
  chk "header_count" (List.length a.headers = List.length b.headers);
  chk "version" (a.version = b.version);
  chk "target" (a.target = b.target);
  chk "method" (a.meth = b.meth);
  !d

(* --- httpz ------------------------------------------------------------- *)

module R = Httpz.Request

let httpz_limits = { R.default_limits with max_content_length = max_int }

let of_httpz t buf (status : R.status) =
  match status with
  | R.Partial -> Partial
  | R.Error -> Reject (Httpz.Parse_error.to_string (R.error t))
  | R.Complete ->
    let str sp = Httpz.Span.to_string buf sp in
    let headers =
      List.init (R.header_count t) (fun i ->
          (str (R.header_name_span t i), str (R.header_value t i)))
    in
    Accept
      { meth = str (R.meth_span t);
        target = str (R.target t);
        version = (match R.version t with Httpz.Version.Http_1_0 -> (1, 0) | Http_1_1 -> (1, 1) | Http_2 -> (2, 0));
        headers;
        content_length =
          (let n = R.content_length t in if n < 0 then None else Some (string_of_int n));
        chunked = R.is_chunked t;
        keep_alive = R.keep_alive t;
        head_length = R.head_length t }

let embed ~off ~garbage s =
  let n = String.length s in
  let b = Bigarray.Array1.create Bigarray.char Bigarray.c_layout (off + n + 64) in
  Bigarray.Array1.fill b garbage;
  for i = 0 to n - 1 do Bigarray.Array1.unsafe_set b (off + i) s.[i] done;
  b

let httpz s =
  let t = R.create ~limits:httpz_limits () in
  let buf = embed ~off:7 ~garbage:'\n' s in
  of_httpz t buf (R.parse t buf ~off:7 ~len:(String.length s))

(* --- http_parser ------------------------------------------------------- *)

type hp_raw = {
  status : int;  (* 0 complete, 1 partial, 2 error, 3 too many fields, -2 unavailable *)
  errno : string;
  used : int;
  hp_method : string;
  url_off : int;
  url_len : int;
  major : int;
  minor : int;
  cl : string;  (* decimal, "" when absent *)
  flags : int;
  hp_keep_alive : bool;
  uses_te : bool;
  fields : (int * int * int * int) array;
}

external hp_parse : string -> hp_raw = "httpz_fuzz_hp_parse"

let f_chunked = 1

let http_parser_available () = (hp_parse "").status <> -2

let http_parser s =
  let r = hp_parse s in
  match r.status with
  | -2 -> failwith "http_parser unavailable: install libhttp-parser-dev (scripts/deps.sh test)"
  | 3 -> failwith "http_parser oracle: more fields than the stub records"
  | 1 -> Partial
  | 2 -> Reject r.errno
  | _ ->
    let sub off len = if off < 0 || len <= 0 then "" else String.sub s off len in
    Accept
      { meth = r.hp_method;
        target = sub r.url_off r.url_len;
        version = (r.major, r.minor);
        headers =
          Array.to_list
            (Array.map (fun (no, nl, vo, vl) -> (sub no nl, trim_ows (sub vo vl))) r.fields);
        content_length = (if r.cl = "" then None else Some r.cl);
        chunked = r.flags land f_chunked <> 0;
        keep_alive = r.hp_keep_alive;
        (* Paused inside on_headers_complete, execute returns the offset of
           the head's final LF. *)
        head_length = r.used + 1 }
