let cmds : int Cmdliner.Cmd.t list = []
