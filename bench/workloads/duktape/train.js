var WEIGHTS = {fib: 20, trees: 10, rounds: 2, sieve: 20000, strings: 3000, json: 800, sort: 4000, closures: 40000, classes: 3000};
