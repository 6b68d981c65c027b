#version 450
// Does nothing: measures the cost of a launch itself.
layout(local_size_x = 1) in;
void main() {}
