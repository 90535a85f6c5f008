from frontdesk.cli.main import main

main()
