from bot.entry import main

raise SystemExit(main())
