from frontdesk.cli import main

main()
