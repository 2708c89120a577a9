open Httpz

let start c =
  Respond.start c Status.Ok;
  Ctx.header c Header_name.Content_type "text/event-stream";
  Ctx.header c Header_name.Cache_control "no-cache";
  Ctx.chunked_start c;
  (* Browsers wait for a first byte before firing [open]. *)
  Ctx.chunk c ":\n\n"

let one_line what s =
  if String.exists (fun ch -> ch = '\n' || ch = '\r') s then invalid_arg ("Sse: newline in " ^ what)

let format ?event ?id ?retry data =
  let b = Buffer.create (String.length data + 32) in
  (match event with
   | Some e -> one_line "event" e; Buffer.add_string b "event: "; Buffer.add_string b e; Buffer.add_char b '\n'
   | None -> ());
  (match id with
   | Some i ->
       one_line "id" i;
       if String.contains i '\000' then invalid_arg "Sse: NUL in id";
       Buffer.add_string b "id: "; Buffer.add_string b i; Buffer.add_char b '\n'
   | None -> ());
  (match retry with
   | Some r ->
       if r < 0 then invalid_arg "Sse: negative retry";
       Buffer.add_string b "retry: "; Buffer.add_string b (string_of_int r); Buffer.add_char b '\n'
   | None -> ());
  let n = String.length data in
  let line_start = ref 0 and i = ref 0 in
  let emit stop =
    Buffer.add_string b "data: ";
    Buffer.add_substring b data !line_start (stop - !line_start);
    Buffer.add_char b '\n'
  in
  while !i < n do
    match data.[!i] with
    | '\n' -> emit !i; incr i; line_start := !i
    | '\r' ->
        emit !i;
        i := if !i + 1 < n && data.[!i + 1] = '\n' then !i + 2 else !i + 1;
        line_start := !i
    | _ -> incr i
  done;
  (* The last line, also when empty ("" or data ending in a newline): the
     client joins the lines with LF, so it then gets exactly [data] back. *)
  emit n;
  Buffer.add_char b '\n';
  Buffer.contents b

let event c ?event ?id ?retry data = Ctx.chunk c (format ?event ?id ?retry data)

let comment c text =
  one_line "comment" text;
  Ctx.chunk c (": " ^ text ^ "\n\n")

let close c = Ctx.chunked_end c
