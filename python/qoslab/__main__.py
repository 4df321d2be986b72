from qoslab.cli import main

main()
