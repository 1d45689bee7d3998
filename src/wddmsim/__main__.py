from wddmsim.cli import main

main()
