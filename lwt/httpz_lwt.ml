open Httpz_server

class engine (r : Reactor.t) =
  object
    inherit Lwt_engine.abstract

    (* The server's loop drives everything: Lwt_main.run has nothing to
       iterate here. *)
    method iter (_ : bool) = ()
    method private cleanup = ()

    method private register_readable fd f =
      let w = Reactor.watch r fd ~write:false f in
      lazy (Reactor.unwatch w)

    method private register_writable fd f =
      let w = Reactor.watch r fd ~write:true f in
      lazy (Reactor.unwatch w)

    method private register_timer delay repeat f =
      let current = ref None in
      let rec arm () =
        current :=
          Some
            (Reactor.after r delay (fun () ->
                 if repeat then arm ();
                 f ()))
      in
      arm ();
      lazy (match !current with Some tm -> Reactor.cancel tm | None -> ())
  end

let installed = ref None

let install () =
  let r = Reactor.current () in
  match !installed with
  | Some r' when r' == r -> ()
  | _ ->
      (* Promises paused with Lwt.pause resume once per turn, as
         Lwt_main.run would do between two iterations. *)
      Reactor.at_each_turn r Lwt.wakeup_paused;
      Lwt_engine.set ~destroy:false (new engine r);
      installed := Some r

let await c p k =
  install ();
  match Lwt.state p with
  | Lwt.Return v -> k v c
  | Lwt.Fail e -> raise e
  | Lwt.Sleep ->
      (* Its cancel hook goes once [p] resolves: awaiting in a loop keeps
         nothing per await. *)
      let resume =
        Ctx.suspend_with_cancel c ~cancel:(fun () -> Lwt.cancel p) (fun c ->
            match Lwt.state p with
            | Lwt.Return v -> k v c
            | Lwt.Fail e -> raise e
            | Lwt.Sleep -> failwith "Httpz_lwt.await: resumed before the promise resolved")
      in
      Lwt.on_any p (fun _ -> resume ()) (fun _ -> resume ())
