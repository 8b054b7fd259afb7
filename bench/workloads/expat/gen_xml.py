#!/usr/bin/env python3
"""Deterministic XML inputs for the expat workload (xmlwf parses them).

    gen_xml.py train|measure OUT

`train` is a catalogue of records with attributes and character data; the
measured input is larger and of another shape: namespaces, deeper nesting,
entity and character references, CDATA sections, comments, processing
instructions and an internal DTD, so what the profile learnt must carry
over to code paths weighted differently."""
import random
import sys


def train(out, rnd):
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<catalog>\n')
    for i in range(12000):
        out.write(f'  <item id="i{i}" price="{rnd.randint(1, 9999) / 100:.2f}" stock="{rnd.randint(0, 500)}">\n')
        out.write(f'    <name>Item number {i} &amp; friends</name>\n')
        out.write(f'    <desc>{" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(5, 25)))}</desc>\n')
        for t in range(rnd.randint(0, 4)):
            out.write(f'    <tag k="{rnd.choice(WORDS)}"/>\n')
        out.write('  </item>\n')
    out.write('</catalog>\n')


def measure(out, rnd):
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write('<!DOCTYPE feed [\n  <!ENTITY co "Example Company, Ltd.">\n  <!ENTITY sig "&#8212; the team">\n'
              '  <!ATTLIST entry status (draft|final) "final">\n]>\n')
    out.write('<feed xmlns="urn:x-feed" xmlns:m="urn:x-meta" xmlns:x="urn:x-ext">\n')
    for i in range(30000):
        status = ' status="draft"' if i % 7 == 0 else ''
        out.write(f'<entry m:seq="{i}" x:lang="{rnd.choice(["en", "fr", "de", "ja"])}"{status}>\n')
        out.write(f'  <!-- entry {i} -->\n')
        out.write(f'  <title>{rnd.choice(WORDS).capitalize()} &co; #{i} &#x263A;</title>\n')
        depth = rnd.randint(1, 6)
        for d in range(depth):
            out.write('  ' * (d + 1) + f'<m:section level="{d}">\n')
        out.write(f'    <content><![CDATA[{" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(10, 40)))} <raw> & stuff]]></content>\n')
        out.write(f'    <p>{" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 30)))} &lt;b&gt; &sig;</p>\n')
        for d in reversed(range(depth)):
            out.write('  ' * (d + 1) + '</m:section>\n')
        if i % 5 == 0:
            out.write(f'  <?render mode="{rnd.choice(WORDS)}"?>\n')
        out.write('</entry>\n')
    out.write('</feed>\n')


WORDS = ('alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma '
         'tau upsilon phi chi psi omega parse token element attribute value buffer stream encoding').split()

if __name__ == '__main__':
    kind, path = sys.argv[1], sys.argv[2]
    with open(path, 'w', encoding='utf-8') as f:
        (train if kind == 'train' else measure)(f, random.Random(20261127))
