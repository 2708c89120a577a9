(* A major GC cycle advances only as the minor heap fills: a worker that
   stopped allocating leaves its cycle where it was, and in the marking
   phase every caml_modify darkens the value it overwrites (connections and
   exchanges storing their buffers and continuations: about 5 % of an
   HTTP/2 worker's time under load, perf). Gc.major would not do: it
   finishes the cycle, then its pending actions start the next one, which
   then stays marking. *)

type t = { mutable words : int }

let create () = { words = -1 }

(* Enough work per slice to mark a heap of 80 MB; a larger one takes a few. *)
let slice_work = 10_000_000
let max_slices = 20

let tick t =
  let now = int_of_float (Gc.minor_words ()) in
  if now <> t.words then t.words <- now
  else begin
    let slices = ref 0 in
    while Extra.gc_marking () && !slices < max_slices do
      ignore (Gc.major_slice slice_work : int);
      incr slices
    done
  end
