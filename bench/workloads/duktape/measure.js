var WEIGHTS = {fib: 25, trees: 13, rounds: 5, sieve: 60000, strings: 12000, json: 2500, sort: 15000, closures: 150000, classes: 9000};
