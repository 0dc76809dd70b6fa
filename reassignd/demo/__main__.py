from reassignd.demo.story import main

main()
