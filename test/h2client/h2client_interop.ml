let tests = []
