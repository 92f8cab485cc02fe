package poseidon

import (
	"errors"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// matrix is a dense square matrix over Fr, row-major; it acts on column
// vectors (y = A·x).
type matrix [][]fr.Element

func newMatrix(n int) matrix {
	m := make(matrix, n)
	for i := range m {
		m[i] = make([]fr.Element, n)
	}
	return m
}

func identity(n int) matrix {
	m := newMatrix(n)
	for i := range m {
		m[i][i].SetOne()
	}
	return m
}

// cauchyMDS is neptune's MDS matrix (src/mds.rs, generate_mds): x_i = i,
// y_j = t + j, M[i][j] = 1/(x_i + y_j). It is symmetric.
func cauchyMDS(t int) matrix {
	m := newMatrix(t)
	for i := range t {
		for j := range t {
			m[i][j].SetUint64(uint64(i + t + j))
			m[i][j].Inverse(&m[i][j])
		}
	}
	return m
}

func (a matrix) mul(b matrix) matrix {
	n := len(a)
	out := newMatrix(n)
	var t fr.Element
	for i := range n {
		for j := range n {
			for k := range n {
				t.Mul(&a[i][k], &b[k][j])
				out[i][j].Add(&out[i][j], &t)
			}
		}
	}
	return out
}

// apply returns A·x.
func (a matrix) apply(x []fr.Element) []fr.Element {
	out := make([]fr.Element, len(a))
	var t fr.Element
	for i := range a {
		for j := range x {
			t.Mul(&a[i][j], &x[j])
			out[i].Add(&out[i], &t)
		}
	}
	return out
}

// minor drops row 0 and column 0.
func (a matrix) minor() matrix {
	n := len(a) - 1
	out := newMatrix(n)
	for i := range n {
		copy(out[i], a[i+1][1:])
	}
	return out
}

var errSingular = errors.New("poseidon: singular matrix")

// inverse by Gauss–Jordan elimination.
func (a matrix) inverse() (matrix, error) {
	n := len(a)
	w := newMatrix(n)
	for i := range n {
		copy(w[i], a[i])
	}
	inv := identity(n)
	var f, t fr.Element
	for col := range n {
		pivot := -1
		for r := col; r < n; r++ {
			if !w[r][col].IsZero() {
				pivot = r
				break
			}
		}
		if pivot < 0 {
			return nil, errSingular
		}
		w[col], w[pivot] = w[pivot], w[col]
		inv[col], inv[pivot] = inv[pivot], inv[col]
		f.Inverse(&w[col][col])
		for j := range n {
			w[col][j].Mul(&w[col][j], &f)
			inv[col][j].Mul(&inv[col][j], &f)
		}
		for r := range n {
			if r == col || w[r][col].IsZero() {
				continue
			}
			f = w[r][col]
			for j := range n {
				t.Mul(&f, &w[col][j])
				w[r][j].Sub(&w[r][j], &t)
				t.Mul(&f, &inv[col][j])
				inv[r][j].Sub(&inv[r][j], &t)
			}
		}
	}
	return inv, nil
}

func (a matrix) isIdentity() bool {
	for i := range a {
		for j := range a[i] {
			if (i == j && !a[i][j].IsOne()) || (i != j && !a[i][j].IsZero()) {
				return false
			}
		}
	}
	return true
}
