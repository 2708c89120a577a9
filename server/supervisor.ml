(* The supervisor: forks the workers in generations, restarts the current
   one's, reloads on SIGHUP with a new generation, and stops them all on
   SIGTERM/SIGINT. It keeps its privileges; workers drop theirs. *)


(* The user the workers run as, resolved once, in the supervisor. *)
type account = { name : string; uid : int; gid : int }

(* The user's ids, looked up before any fork; without a user, a warning
   when serving as root. *)
let account = function
  | None ->
      if Unix.geteuid () = 0 then
        Log.warn "serving as root: every file root can read is readable through the handler; \
             give --user (config.user) to run as an unprivileged user";
      Ok None
  | Some name -> (
      match Unix.getpwnam name with
      | exception Not_found -> Error (Printf.sprintf "user %s: no such user" name)
      | pw ->
          let me = Unix.geteuid () in
          if me <> 0 && pw.Unix.pw_uid <> me then
            Error
              (Printf.sprintf "user %s: only root can serve as another user (running as uid %d)" name
                 me)
          else Ok (Some { name; uid = pw.Unix.pw_uid; gid = pw.Unix.pw_gid }))

(* setgroups (the user's own groups, as a login would have them: ssl-cert
   for a file kept readable by that group, say), setgid, setuid; then
   checked: every id is the user's, and root cannot be taken back. *)
let become a =
  let fail fmt = Printf.ksprintf (fun m -> Error (Printf.sprintf "user %s: %s" a.name m)) fmt in
  match
    if Unix.geteuid () = 0 then Unix.initgroups a.name a.gid;
    Unix.setgid a.gid;
    Unix.setuid a.uid
  with
  | exception Unix.Unix_error (e, f, _) -> fail "%s: %s" f (Unix.error_message e)
  | () ->
      if Unix.getuid () <> a.uid || Unix.geteuid () <> a.uid || Unix.getgid () <> a.gid
         || Unix.getegid () <> a.gid
      then fail "setuid/setgid did not take"
      else if a.uid <> 0 && (match Unix.setuid 0 with () -> true | exception Unix.Unix_error _ -> false)
      then fail "root could be taken back after setuid"
      else Ok ()

(* A worker that dies within [quick_death] of its start counts as a crash
   loop: its restart waits [delay], doubled on each such death up to
   [max_delay]; a worker that lived longer is restarted at once. *)
let quick_death = 1.0
let min_delay = 0.1
let max_delay = 10.0

type slot = {
  mutable pid : int; (* 0: not running *)
  mutable started : float;
  mutable delay : float;
  mutable restart_at : float; (* when pid = 0 *)
  mutable ready : Unix.file_descr option; (* read end: one byte once serving *)
}

let worker_main ~serve ~worker_start supervisor ready ~user ~lfds =
  let code =
    match match user with None -> Ok () | Some a -> become a with
    | Error msg ->
        Log.error "worker %d: %s" (Unix.getpid ()) msg;
        2
    | Ok () -> (
        (* A worker must not outlive its supervisor: the kernel sends
           SIGTERM (received through the signalfd, so it starts a graceful
           shutdown). Asked after the ids changed, which clears it. *)
        ignore (Syscall.set_pdeathsig Sys.sigterm : int);
        if Unix.getppid () <> supervisor then 0
        (* The application's worker start hook, before the worker says it
           serves: a failure there is a worker that did not start. *)
        else if not (worker_start ()) then 1
        else
          try
            (try ignore (Unix.write_substring ready "." 0 1 : int) with Unix.Unix_error _ -> ());
            Unix.close ready;
            serve ~lfds
          with e ->
            Log.error "worker %d died: %s" (Unix.getpid ()) (Printexc.to_string e);
            2)
  in
  flush_all ();
  Unix._exit code

(* OCaml numbers the signals of Sys with negative integers of its own:
   name them as the system does. *)
let signal_names =
  [ (Sys.sighup, "SIGHUP", 1); (Sys.sigint, "SIGINT", 2); (Sys.sigquit, "SIGQUIT", 3);
    (Sys.sigill, "SIGILL", 4); (Sys.sigtrap, "SIGTRAP", 5); (Sys.sigabrt, "SIGABRT", 6);
    (Sys.sigbus, "SIGBUS", 7); (Sys.sigfpe, "SIGFPE", 8); (Sys.sigkill, "SIGKILL", 9);
    (Sys.sigusr1, "SIGUSR1", 10); (Sys.sigsegv, "SIGSEGV", 11); (Sys.sigusr2, "SIGUSR2", 12);
    (Sys.sigpipe, "SIGPIPE", 13); (Sys.sigalrm, "SIGALRM", 14); (Sys.sigterm, "SIGTERM", 15);
    (Sys.sigchld, "SIGCHLD", 17); (Sys.sigcont, "SIGCONT", 18); (Sys.sigstop, "SIGSTOP", 19);
    (Sys.sigtstp, "SIGTSTP", 20); (Sys.sigttin, "SIGTTIN", 21); (Sys.sigttou, "SIGTTOU", 22);
    (Sys.sigurg, "SIGURG", 23); (Sys.sigxcpu, "SIGXCPU", 24); (Sys.sigxfsz, "SIGXFSZ", 25);
    (Sys.sigvtalrm, "SIGVTALRM", 26); (Sys.sigprof, "SIGPROF", 27); (Sys.sigpoll, "SIGPOLL", 29);
    (Sys.sigsys, "SIGSYS", 31) ]

let signal_name s =
  match List.find_opt (fun (o, _, _) -> o = s) signal_names with
  | Some (_, name, n) -> Printf.sprintf "%s (%d)" name n
  | None -> Printf.sprintf "signal %d" s

let describe_status = function
  | Unix.WEXITED n -> Printf.sprintf "exited with code %d" n
  | Unix.WSIGNALED s -> "was killed by " ^ signal_name s
  | Unix.WSTOPPED s -> "was stopped by " ^ signal_name s

(* Waits until every worker started so far reports that it runs; [false]
   if one fails (exits, or is not ready within 10 s). *)
let await_ready slots =
  let deadline = Unix.gettimeofday () +. 10. in
  let ok = ref true in
  Array.iter
    (fun s ->
      match s.ready with
      | None -> ok := false
      | Some fd ->
          let byte = Bytes.create 1 in
          let rec wait () =
            let left = deadline -. Unix.gettimeofday () in
            if left <= 0. then false
            else
              match Unix.select [ fd ] [] [] left with
              | [], _, _ -> false
              | _ -> (try Unix.read fd byte 0 1 = 1 with Unix.Unix_error _ -> false)
              | exception Unix.Unix_error (Unix.EINTR, _, _) -> wait ()
          in
          if not (wait ()) then ok := false;
          Unix.close fd;
          s.ready <- None)
    slots;
  !ok

(* Workers are forked in generations. The current one is restarted when
   a worker dies; SIGHUP starts the next one (with the access log and the
   certificate the supervisor just reopened and read) on the same listening
   sockets, and once it serves, the previous one gets SIGTERM: it stops
   accepting and finishes its requests within [grace_period]. A worker of a
   previous generation is never restarted. *)
let close_all fds = List.iter (fun fd -> if fd >= 0 then ignore (Syscall.close fd : int)) fds

let run ~worker_start ~workers:nworkers ~user ~listeners:lfds ~serve ~reload ~announce =
  let sfd = Extra.signalfd [ Sys.sigchld; Sys.sigterm; Sys.sigint; Sys.sighup; Sys.sigusr1 ] in
  if sfd < 0 then begin
    Log.error "signalfd: %s" (Syscall.error_message sfd);
    1
  end
  else begin
    (* Before any fork: the per-client connection counts every worker
       shares (Conn_limit; untouched, it costs no memory). *)
    Conn_limit.prepare ();
    let me = Unix.getpid () in
    let lfds = ref lfds in
    let generation () =
      Array.init nworkers (fun _ ->
          { pid = 0; started = 0.; delay = min_delay; restart_at = 0.; ready = None })
    in
    let slots = ref (generation ()) in
    (* A generation being started by SIGHUP, until it serves. *)
    let starting = ref [||] in
    (* Pids of previous generations, finishing their requests. *)
    let retiring = ref [] in
    let close_ready s =
      match s.ready with
      | Some fd ->
          Unix.close fd;
          s.ready <- None
      | None -> ()
    in
    let spawn s =
      flush_all ();
      let r, w = Unix.pipe ~cloexec:true () in
      match Unix.fork () with
      | 0 ->
          ignore (Syscall.close sfd : int);
          Unix.close r;
          let others o = match o.ready with Some fd -> Unix.close fd | None -> () in
          Array.iter others !slots;
          Array.iter others !starting;
          worker_main ~serve ~worker_start me w ~user ~lfds:!lfds
      | pid ->
          Unix.close w;
          close_ready s;
          s.ready <- Some r;
          s.pid <- pid;
          s.started <- Unix.gettimeofday ()
      | exception Unix.Unix_error (e, _, _) ->
          Unix.close r;
          Unix.close w;
          Log.error "fork: %s" (Unix.error_message e);
          s.restart_at <- Unix.gettimeofday () +. s.delay
    in
    (* SIGQUIT to a generation, whose workers are then only waited for:
       they stop accepting and finish their requests however long those
       take (a download is not cut by a log rotation's reload); each is
       still bounded by the write and idle timeouts. *)
    let retire gen =
      Array.iter
        (fun s ->
          close_ready s;
          if s.pid <> 0 then begin
            (try Unix.kill s.pid Sys.sigquit with Unix.Unix_error _ -> ());
            retiring := s.pid :: !retiring;
            s.pid <- 0
          end)
        gen
    in
    Array.iter spawn !slots;
    let stopping = ref false in
    (* Stopping: the supervisor's copies of the listening sockets go too,
       so once the workers have closed theirs, new clients are refused
       instead of waiting in a queue nobody accepts from. *)
    let stop () =
      stopping := true;
      close_all !lfds;
      lfds := [];
      Array.iter
        (fun s -> if s.pid <> 0 then try Unix.kill s.pid Sys.sigterm with Unix.Unix_error _ -> ())
        !slots;
      (* Retired workers too: they now finish within the grace period. *)
      List.iter (fun pid -> try Unix.kill pid Sys.sigterm with Unix.Unix_error _ -> ()) !retiring
    in
    if await_ready !slots then announce ()
    else begin
      Log.error "workers failed to start";
      stop ()
    end;
    let failed = !stopping in
    (* SIGHUP: [reload] reads everything again first; on an error nothing
       changes. *)
    let reload () =
      match reload () with
      | Error msg -> Log.error "SIGHUP: %s" msg
      | Ok (what, settle) ->
          let next = generation () in
          starting := next;
          Array.iter spawn next;
          let ok = await_ready next in
          starting := [||];
          settle ok;
          if ok then begin
            retire !slots;
            slots := next;
            Log.msg "SIGHUP: %s; %d new workers serve, the previous ones finish their requests" what
              nworkers
          end
          else begin
            retire next;
            Log.error "SIGHUP: %s, but the new workers did not start; the previous ones keep serving" what
          end
    in
    (* SIGUSR1: the logs reopened, nothing else. As nginx: this process
       (which may open any path) reopens each file at its path, creating
       it, owned by the workers' user; then each worker of every
       generation reopens it by path itself (its descriptors are its own). *)
    let reopen_logs () =
      let owner = Option.map (fun a -> (a.uid, a.gid)) user in
      List.iter (fun e -> Log.warn "SIGUSR1: reopening the access log: %s (keeping the old one)" e)
        (Log_dest.reopen_files ~owner);
      (* Given to the workers only if created now or root's (never
         chown by path: it would follow a symlink put there). *)
      (match Log.reopen ?owner () with
       | Error e -> Log.warn "SIGUSR1: reopening the error log: %s (keeping the old one)" e
       | Ok () -> ());
      let pids = List.filter (fun p -> p <> 0) (List.map (fun s -> s.pid) (Array.to_list !slots @ Array.to_list !starting)) @ !retiring in
      List.iter (fun pid -> try Unix.kill pid Sys.sigusr1 with Unix.Unix_error _ -> ()) pids;
      Log.msg "SIGUSR1: logs reopened (%d workers)" (List.length pids)
    in
    let running () = Array.exists (fun s -> s.pid <> 0) !slots || !retiring <> [] in
    let reap () =
      let continue = ref true in
      while !continue do
        match Unix.waitpid [ Unix.WNOHANG ] (-1) with
        | 0, _ -> continue := false
        | pid, status -> (
            match List.find_opt (fun s -> s.pid = pid) (Array.to_list !slots) with
            | None ->
                if List.mem pid !retiring then begin
                  retiring := List.filter (fun p -> p <> pid) !retiring;
                  match status with
                  | Unix.WEXITED 0 -> ()
                  | st -> Log.warn "worker %d (previous generation) %s" pid (describe_status st)
                end
            | Some s ->
                s.pid <- 0;
                close_ready s;
                let now = Unix.gettimeofday () in
                if not !stopping then begin
                  let quick = now -. s.started < quick_death in
                  s.delay <- (if quick then Float.min max_delay (s.delay *. 2.) else min_delay);
                  let wait = if quick then s.delay else 0. in
                  Log.warn "worker %d %s; restarting%s" pid (describe_status status)
                    (if wait > 0. then Printf.sprintf " in %.1f s" wait else "");
                  s.restart_at <- now +. wait
                end)
        | exception Unix.Unix_error (Unix.EINTR, _, _) -> ()
        | exception Unix.Unix_error (Unix.ECHILD, _, _) -> continue := false
      done
    in
    let pfd = [ Syscall.unix_of_fd sfd ] in
    while (not !stopping) || running () do
      let now = Unix.gettimeofday () in
      if not !stopping then
        Array.iter (fun s -> if s.pid = 0 && s.restart_at <= now then spawn s) !slots;
      let timeout =
        Array.fold_left
          (fun acc s ->
            if s.pid = 0 && not !stopping then Float.min acc (s.restart_at -. now) else acc)
          1.0 !slots
      in
      (match Unix.select pfd [] [] (Float.max 0.01 timeout) with
       | _ -> ()
       | exception Unix.Unix_error (Unix.EINTR, _, _) -> ());
      let continue = ref true in
      while !continue do
        let r = Extra.signalfd_read sfd in
        if r > 0 then begin
          let s = -r in
          if s = Sys.sigchld then reap ()
          else if s = Sys.sighup then (if not !stopping then reload ())
          else if s = Sys.sigusr1 then reopen_logs ()
          else begin
            if not !stopping then Log.msg "stopping: workers finish in-flight requests";
            stop ()
          end
        end
        else if r <> - Syscall.eintr then continue := false
      done;
      (* SIGCHLD may coalesce with an earlier one already read: reap anyway. *)
      reap ()
    done;
    Array.iter close_ready !slots;
    ignore (Syscall.close sfd : int);
    close_all !lfds;
    if failed then 1 else 0
  end

